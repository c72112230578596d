/**
 * The outbound URL policy for every user-registered URL (tool servers, specs,
 * base URLs, hooks, result handlers): https only, no credentials in the URL,
 * no bare hostnames, and no address that is loopback, private (10/8,
 * 172.16/12, 192.168/16, 100.64/10, fc00::/7), link-local (169.254/16, which
 * holds the cloud metadata address, fe80::/10), unspecified, multicast or
 * reserved, whether written literally or reached through DNS.
 * SVC_ALLOW_PRIVATE_URLS=1 lifts all of it for local development and tests
 * (a workspace's egress keeps refusing link-local and metadata addresses:
 * `isLinkLocal`).
 */
import { BlockList, isIP } from "node:net"

const blocked = new BlockList()
for (
  const [net, prefix] of [
    ["0.0.0.0", 8], // "this network", unspecified
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.0.2.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
    ["224.0.0.0", 4], // multicast
    ["240.0.0.0", 4] // reserved, broadcast
  ] as const
) blocked.addSubnet(net, prefix, "ipv4")
for (
  const [net, prefix] of [
    ["::", 128], // unspecified
    ["::1", 128],
    ["64:ff9b::", 96], // NAT64 can reach private IPv4
    ["64:ff9b:1::", 48], // local-use NAT64
    ["100::", 64],
    ["2001::", 32], // Teredo tunnels to an IPv4 address
    ["2001:db8::", 32],
    ["fc00::", 7],
    ["fe80::", 10],
    ["fec0::", 10], // site-local (deprecated, still private)
    ["ff00::", 8]
  ] as const
) blocked.addSubnet(net, prefix, "ipv6")

/** The eight 16-bit groups of an IPv6 address (as `isIP` accepts it, a trailing dotted quad included). */
const groupsOf = (address: string): ReadonlyArray<number> => {
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address)
  const hex = quad === null
    ? address
    : `${address.slice(0, quad.index)}${((+quad[1] << 8) | +quad[2]).toString(16)}:${
      ((+quad[3] << 8) | +quad[4]).toString(16)
    }`
  const [head, tail] = hex.includes("::") ? hex.split("::") : [hex, undefined]
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)))
  const left = parse(head)
  if (tail === undefined) return left
  const right = parse(tail)
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right]
}

const quadOf = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`

/**
 * The IPv4 address an IPv6 address carries and is routed to: IPv4-compatible
 * (::a.b.c.d), IPv4-mapped (::ffff:a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d) and 6to4 (2002:AABB:CCDD::/48).
 */
const embeddedIpv4 = (address: string): string | undefined => {
  const g = groupsOf(address)
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zeros(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return quadOf(g[6], g[7])
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return quadOf(g[6], g[7])
  if (g[0] === 0x2002) return quadOf(g[1], g[2])
  return undefined
}

/**
 * Link-local addresses, where the cloud metadata services answer (169.254.169.254 and AWS's
 * fd00:ec2::254, Alibaba's 100.100.100.200): never reachable, SVC_ALLOW_PRIVATE_URLS=1 or not,
 * since no development setup needs them and they hand out the host's cloud credentials.
 */
const linkLocal = new BlockList()
linkLocal.addSubnet("169.254.0.0", 16, "ipv4")
linkLocal.addAddress("100.100.100.200", "ipv4")
linkLocal.addSubnet("fe80::", 10, "ipv6")
linkLocal.addAddress("fd00:ec2::254", "ipv6")

/** Host names of cloud metadata services (GCP, AWS, Azure's and Oracle's resolve to 169.254.169.254). */
export const metadataHostnames: ReadonlyArray<string> = [
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.internal"
]

/** A link-local or cloud metadata address (written as IPv4 or carried in an IPv6 form): never to be reached. */
export const isLinkLocal = (address: string): boolean => {
  const family = isIP(address)
  if (family === 0) return false
  const v4 = family === 6 ? embeddedIpv4(address) : undefined
  if (v4 !== undefined && isLinkLocal(v4)) return true
  return linkLocal.check(address, family === 4 ? "ipv4" : "ipv6")
}

/** Why an address may not be reached, or undefined when it is public. */
export const forbiddenAddress = (address: string): string | undefined => {
  const family = isIP(address)
  if (family === 0) return `'${address}' is not an IP address`
  if (family === 6) {
    // A form that carries an IPv4 address is judged by that address (:: and ::1 carry 0.0.0.0 and 0.0.0.1).
    const v4 = embeddedIpv4(address)
    const reason = v4 === undefined ? undefined : forbiddenAddress(v4)
    if (v4 !== undefined && reason !== undefined) return reason.replace(v4, `${address} (${v4})`)
  }
  return blocked.check(address, family === 4 ? "ipv4" : "ipv6")
    ? `${address} is a loopback, private, link-local, unspecified, multicast or reserved address`
    : undefined
}

/** Why a model-chosen URL may never reach an address (`isLinkLocal`), whatever the settings; else undefined. */
export const metadataAddress = (address: string): string | undefined =>
  isLinkLocal(address) ? `${address} is a link-local or cloud metadata address` : undefined

export interface UrlCheck {
  readonly url: URL
  /** Set when the host is a name that must still be resolved and checked. */
  readonly hostname?: string
}

/** The checks that need no DNS. Returns the reason on refusal. */
export const checkUrlShape = (raw: string, allowPrivate: boolean): UrlCheck | string => {
  // WHATWG URL parsing drops tabs and newlines and reads a backslash as a slash; other
  // parsers (git's curl) do not, so such a URL could name another host there.
  if (/[\s\\\u0000-\u001f\u007f]/.test(raw.trim())) {
    return "must not contain whitespace, control characters or backslashes"
  }
  if (!URL.canParse(raw)) return "is not an absolute URL"
  const url = new URL(raw)
  if (allowPrivate) {
    return url.protocol === "https:" || url.protocol === "http:" ? { url } : "must be an http(s) URL"
  }
  if (url.protocol !== "https:") return "must use https"
  if (url.username !== "" || url.password !== "") return "must not carry credentials"
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  if (isIP(host) !== 0) {
    const reason = forbiddenAddress(host)
    return reason === undefined ? { url } : `points to ${reason}`
  }
  const name = host.endsWith(".") ? host.slice(0, -1) : host
  if (!name.includes(".")) return "must use a fully qualified hostname"
  if (name === "localhost" || name.endsWith(".localhost")) return "points to a loopback hostname"
  return { url, hostname: name }
}

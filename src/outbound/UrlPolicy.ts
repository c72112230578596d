/**
 * The outbound URL policy for every user-registered URL (tool servers, specs,
 * base URLs, hooks, result handlers): https only, no credentials in the URL,
 * no bare hostnames, and no address that is loopback, private (10/8,
 * 172.16/12, 192.168/16, 100.64/10, fc00::/7), link-local (169.254/16, which
 * holds the cloud metadata address, fe80::/10), unspecified, multicast or
 * reserved, whether written literally or reached through DNS.
 * SVC_ALLOW_PRIVATE_URLS=1 lifts all of it for local development and tests.
 */
import { BlockList, isIP } from "node:net"

const blocked = new BlockList()
for (const [net, prefix] of [
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
] as const) blocked.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128],
  ["64:ff9b::", 96], // NAT64 can reach private IPv4
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8]
] as const) blocked.addSubnet(net, prefix, "ipv6")

/** Why an address may not be reached, or undefined when it is public. */
export const forbiddenAddress = (address: string): string | undefined => {
  const family = isIP(address)
  if (family === 0) return `'${address}' is not an IP address`
  if (family === 6) {
    // IPv4-mapped and -compatible forms carry an IPv4 address: judge that one.
    const mapped = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
    if (mapped) return forbiddenAddress(mapped[1])
    const hexMapped = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
    if (hexMapped) {
      const hi = parseInt(hexMapped[1], 16)
      const lo = parseInt(hexMapped[2], 16)
      return forbiddenAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`)
    }
  }
  return blocked.check(address, family === 4 ? "ipv4" : "ipv6")
    ? `${address} is a loopback, private, link-local, unspecified, multicast or reserved address`
    : undefined
}

export interface UrlCheck {
  readonly url: URL
  /** Set when the host is a name that must still be resolved and checked. */
  readonly hostname?: string
}

/** The checks that need no DNS. Returns the reason on refusal. */
export const checkUrlShape = (raw: string, allowPrivate: boolean): UrlCheck | string => {
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

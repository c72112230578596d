/**
 * The network policy of a managed workspace (spec 2.1.3 `network`), as the
 * egress proxy applies it to every connection a sandbox asks for:
 *
 * - `offline`: the sandbox has no route out at all (no proxy is offered).
 * - `restricted`: only hosts in `allowDomains`: an exact name (`api.example.com`)
 *   or a wildcard `*.example.com`, which matches every name below
 *   `example.com` but not `example.com` itself. Matching ignores case and a
 *   trailing dot.
 * - `public`: any host name.
 *
 * Whatever the mode, the address a name resolves to must be public (the
 * outbound URL policy: no loopback, private, link-local or metadata address),
 * so an allowed name cannot be pointed at the service's own network. Only with
 * SVC_ALLOW_PRIVATE_URLS=1 (development and tests) may a workspace reach a
 * private or loopback address, and only for a host named exactly: listed in a
 * `restricted` workspace's allowDomains (not through a wildcard), or named by
 * the service itself (the seed or code-host origin). A host a `public`
 * workspace names never reaches one. Link-local and cloud metadata addresses
 * are never reached, whatever the setting.
 *
 * An `allowDomains` entry that could never be reached is refused when the
 * agent is created or validated (`allowDomainRefusal`).
 */
import { isIP } from "node:net"
import { forbiddenAddress, isLinkLocal, metadataHostnames } from "../outbound/UrlPolicy.ts"

export type NetworkMode =
  | { readonly mode: "offline" }
  | { readonly mode: "public" }
  | { readonly mode: "restricted"; readonly allowDomains: ReadonlyArray<string> }

export interface EgressRules {
  readonly network: NetworkMode
  /** SVC_ALLOW_PRIVATE_URLS=1. */
  readonly allowPrivate: boolean
  /** Hosts the service itself opens to the workspace (seed, code host), matched exactly. */
  readonly serviceHosts: ReadonlyArray<string>
}

const normalize = (host: string): string => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  return (bare.endsWith(".") ? bare.slice(0, -1) : bare).toLowerCase()
}

/** A private destination is reachable (SVC_ALLOW_PRIVATE_URLS=1 only) when named exactly: by the service, or in restricted allowDomains. */
const namedExactly = (rules: EgressRules, host: string): boolean => {
  const name = normalize(host)
  const listed = rules.network.mode === "restricted" ? rules.network.allowDomains : []
  return [...listed, ...rules.serviceHosts].some((entry) => !entry.startsWith("*.") && normalize(entry) === name)
}

/** Why the sandbox may not ask for `host` at all (before any DNS), or undefined. */
export const hostRefusal = (rules: EgressRules, host: string): string | undefined => {
  const name = normalize(host)
  if (name === "") return "an empty host"
  switch (rules.network.mode) {
    case "offline":
      return "the workspace is offline"
    case "public":
      return undefined
    case "restricted": {
      if (rules.serviceHosts.some((entry) => normalize(entry) === name)) return undefined
      const allowed = rules.network.allowDomains.some((entry) => {
        const pattern = normalize(entry)
        return pattern.startsWith("*.")
          ? name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1
          : name === pattern
      })
      return allowed ? undefined : `${name} is not in the workspace's allowDomains`
    }
  }
}

/** Why `host`, resolved to `address`, may not be reached, or undefined. */
export const addressRefusal = (rules: EgressRules, host: string, address: string): string | undefined => {
  const reason = forbiddenAddress(address)
  if (reason === undefined) return undefined
  if (rules.allowPrivate && namedExactly(rules, host) && !isLinkLocal(address)) return undefined
  return `${normalize(host)} resolves to ${reason}`
}

const isLoopbackName = (name: string): boolean => name === "localhost" || name.endsWith(".localhost")

/**
 * Why an `allowDomains` entry could never be reached, or undefined; told without DNS (a name's
 * addresses are checked when it is reached). Never: link-local and cloud metadata addresses and
 * names. Only with SVC_ALLOW_PRIVATE_URLS=1 (`allowPrivate`), and only named exactly: loopback
 * (`localhost`), private, unspecified and other non-public addresses. A wildcard under a loopback
 * name is never reachable (private destinations are reached only when named exactly).
 */
export const allowDomainRefusal = (entry: string, allowPrivate: boolean): string | undefined => {
  const wildcard = entry.startsWith("*.")
  const name = normalize(wildcard ? entry.slice(2) : entry)
  const never = `'${entry}' can never be reached from a workspace`
  const devOnly = "workspaces reach loopback and private addresses only on a development deployment " +
    "(SVC_ALLOW_PRIVATE_URLS=1), named exactly"
  if (isIP(name) !== 0) {
    if (wildcard) return `${never}: a wildcard applies to host names, not addresses`
    if (isLinkLocal(name)) return `${never}: link-local and cloud metadata addresses are refused`
    const reason = forbiddenAddress(name)
    if (reason !== undefined && !allowPrivate) return `${never} on this deployment: ${reason}; ${devOnly}`
    return undefined
  }
  if (metadataHostnames.includes(name)) return `${never}: it names a cloud metadata service`
  if (isLoopbackName(name)) {
    if (wildcard) return `${never}: names under localhost are loopback, and a wildcard never reaches loopback`
    if (!allowPrivate) return `${never} on this deployment: it is a loopback name; ${devOnly}`
  }
  return undefined
}

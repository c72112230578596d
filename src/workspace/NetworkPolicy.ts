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
 * workspace names never reaches one.
 */
import { forbiddenAddress } from "../outbound/UrlPolicy.ts"

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
  if (rules.allowPrivate && namedExactly(rules, host)) return undefined
  return `${normalize(host)} resolves to ${reason}`
}

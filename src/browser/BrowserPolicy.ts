/**
 * Where `browser_navigate` may go: http and https only, and never a host the
 * workspace's network policy refuses (NetworkPolicy.hostRefusal, the egress
 * proxy's own first check), answered as a tool error naming the policy
 * before any request is made. Loopback is the workspace's own services
 * (their ports are served on 127.0.0.1 inside the sandbox, as for commands).
 * What a page then loads (subresources, redirects, scripts' requests) goes
 * through the egress proxy, which refuses the same way, per connection.
 */
import { type EgressRules, hostRefusal } from "../workspace/NetworkPolicy.ts"

const loopback = new Set(["localhost", "127.0.0.1", "[::1]"])

export const destinationRefusal = (rules: EgressRules, url: string): string | undefined => {
  const parsed = URL.parse(url)
  if (parsed === null) return `'${url}' is not a URL`
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return `the browser opens http and https URLs only, not ${parsed.protocol}`
  }
  if (loopback.has(parsed.hostname)) return undefined
  const refused = hostRefusal(rules, parsed.hostname)
  return refused === undefined
    ? undefined
    : `the workspace's network policy (${rules.network.mode}) refuses ${parsed.origin}: ${refused}`
}

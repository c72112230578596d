/**
 * Where browser_navigate may go before any request: http(s) only, loopback
 * (the workspace's own services) always, anything else as the workspace's
 * network policy says, the refusal naming the policy.
 */
import { assert, describe, it } from "@effect/vitest"
import { destinationRefusal } from "../../../src/browser/BrowserPolicy.ts"
import type { NetworkMode } from "../../../src/workspace/NetworkPolicy.ts"

const rules = (network: NetworkMode) => ({ network, allowPrivate: false, serviceHosts: [] })
const restricted = rules({ mode: "restricted", allowDomains: ["intranet.example.com", "*.corp.example"] })

const rows: ReadonlyArray<readonly [string, ReturnType<typeof rules>, string, string | undefined]> = [
  ["public: any host", rules({ mode: "public" }), "https://news.example.org/a", undefined],
  ["restricted: a listed host", restricted, "https://intranet.example.com/x", undefined],
  ["restricted: under a wildcard", restricted, "http://wiki.corp.example/", undefined],
  [
    "restricted: another host",
    restricted,
    "https://other.example.com/login",
    "the workspace's network policy (restricted) refuses https://other.example.com: other.example.com is not in the workspace's allowDomains"
  ],
  [
    "offline: any host",
    rules({ mode: "offline" }),
    "https://intranet.example.com/",
    "the workspace's network policy (offline) refuses https://intranet.example.com: the workspace is offline"
  ],
  ["offline: the workspace's own service on loopback", rules({ mode: "offline" }), "http://127.0.0.1:3000/", undefined],
  ["offline: localhost", rules({ mode: "offline" }), "http://localhost:8080/app", undefined],
  [
    "a file URL",
    rules({ mode: "public" }),
    "file:///etc/passwd",
    "the browser opens http and https URLs only, not file:"
  ],
  ["not a URL", rules({ mode: "public" }), "intranet", "'intranet' is not a URL"]
]

describe("destinationRefusal", () => {
  for (const [name, r, url, refused] of rows) {
    it(name, () => assert.strictEqual(destinationRefusal(r, url), refused))
  }
})

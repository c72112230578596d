/**
 * A real sandbox for tests: a fresh root under the system temp directory
 * (traversable by the workspaces' uids), removed when the layer is released,
 * small limits so a test that hits one ends quickly, and workspaces whose
 * network goes through the egress proxy.
 */
import { Effect, Layer } from "effect"
import { promises as dns } from "node:dns"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EgressProxy from "../../src/workspace/EgressProxy.ts"
import type { EgressRules } from "../../src/workspace/NetworkPolicy.ts"
import type { Limits } from "../../src/workspace/ResourceClass.ts"
import { Sandbox } from "../../src/workspace/Sandbox.ts"
import * as SandboxLive from "../../src/workspace/SandboxLive.ts"
import { DnsServer } from "./DnsServer.ts"

const MiB = 1024 * 1024

export const testLimits: Limits = {
  cpuSeconds: 2,
  memoryBytes: 256 * MiB,
  processes: 32,
  diskBytes: 8 * MiB,
  tmpBytes: 4 * MiB,
  defaultTimeoutMs: 10_000,
  maxTimeoutMs: 10_000,
  outputBytes: 64 * 1024
}

/**
 * Room for LibreOffice and Node (the document and media tools): a small class's memory, threads
 * and time, on a loaded machine.
 */
export const documentLimits: Limits = {
  ...testLimits,
  cpuSeconds: 120,
  memoryBytes: 1024 * MiB,
  processes: 256,
  diskBytes: 256 * MiB,
  tmpBytes: 64 * MiB,
  defaultTimeoutMs: 200_000,
  maxTimeoutMs: 200_000
}

/** The sandbox on a root of its own; the root (every workspace in it) is deleted at the end. */
export const sandboxLayer = Layer.unwrap(
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = mkdtempSync(join(tmpdir(), "svc-sandbox-"))
      chmodSync(root, 0o711) // mkdtemp makes it owner-only; the workspaces' uids must pass through it
      return root
    }),
    (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
  ).pipe(Effect.map((root) => SandboxLive.layer({ root, diskCheckIntervalMs: 100 })))
)

/**
 * A workspace whose network is the egress proxy (`network: "proxy"`): the proxy enforces `rules` on
 * the workspace's socket and resolves names with the test DNS server. Scoped: the proxy stops with it.
 */
export const proxiedWorkspace = (id: string, rules: EgressRules, limits: Limits) =>
  Effect.gen(function*() {
    const sandbox = yield* Sandbox
    const server = yield* DnsServer
    const resolver = new dns.Resolver()
    resolver.setServers([server.address])
    yield* EgressProxy.start({
      socketPath: yield* sandbox.egressSocketPath(id),
      rules,
      resolve: async (host) => (await resolver.resolve4(host)).map((address) => ({ address, family: 4 }))
    })
    const workspace = yield* sandbox.open(id, limits, { network: "proxy" })
    return { sandbox, workspace }
  })

/**
 * A real sandbox for tests: a fresh root under the system temp directory
 * (traversable by the workspaces' uids), removed when the layer is released,
 * and small limits so a test that hits one ends quickly.
 */
import { Effect, Layer } from "effect"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Limits } from "../../src/workspace/ResourceClass.ts"
import * as SandboxLive from "../../src/workspace/SandboxLive.ts"

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

/**
 * Workspace snapshots across a master key rotation and a move between nodes:
 * services one after another on one PostgreSQL database, each with a
 * workspace root of its own (another node's disk). A snapshot sealed under
 * the old key restores on a node whose current key is new and that keeps the
 * old one in SVC_MASTER_KEY_PREVIOUS; that run's end seals it again under the
 * new key although no file changed. A node that no longer has the key a
 * snapshot is sealed under cannot restore it: the run ends snapshot_unavailable.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { agentWithThread, bashStep, getRun, getThread, outputsOf, send } from "../support/Conversation.ts"
import * as Snapshots from "../support/Snapshots.ts"
import { testDatabase, withClient } from "../support/TestDatabase.ts"
import * as TestServer from "../support/TestServer.ts"

const offline = { type: "managed", shell: true, network: { mode: "offline" } }

/** A node's own workspace root (traversable by the workspaces' uids), removed with the scope. */
const workspaceRoot = Effect.acquireRelease(
  Effect.sync(() => {
    const root = mkdtempSync(join(tmpdir(), "svc-key-ws-"))
    chmodSync(root, 0o711)
    return root
  }),
  (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
)

describe("workspace snapshots and master key rotation", () => {
  it.effect(
    "a snapshot sealed under the old key restores on another node with a new key, and is sealed again under it",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const oldKey = TestServer.testMasterKey
        const newKey = Buffer.alloc(32, 9).toString("base64")
        const unrelatedKey = Buffer.alloc(32, 11).toString("base64")
        /** A service on its own workspace root with these master keys. */
        const node = (current: string, previous: ReadonlyArray<string>) =>
          Effect.gen(function*() {
            return TestServer.layerWith({
              ...TestServer.baseConfig(db.url, yield* TestServer.freePort),
              workspaceRoot: yield* workspaceRoot,
              masterKey: Option.some(Redacted.make(current)),
              previousMasterKeys: previous.map((k) => Redacted.make(k))
            })
          })
        const stored = (threadId: string) =>
          withClient(db.url, (sql) => Snapshots.storedSnapshot(sql, threadId)).pipe(
            Effect.flatMap((row) => row === undefined ? Effect.die(new Error("no snapshot")) : Effect.succeed(row))
          )

        // ---- node A, the old key: the first run stores the snapshot sealed under it ----
        const threadId = yield* Effect.gen(function*() {
          const { thread } = yield* agentWithThread({ workspace: offline })
          yield* send(thread.id, bashStep("echo 'written on node A' > notes.txt"))
          return thread.id
        }).pipe(Effect.provide(yield* node(oldKey, [])))
        const first = yield* stored(threadId)
        assert.strictEqual(first.version, 1)
        assert.strictEqual(first.key_id, Snapshots.keyIdOf(oldKey))

        // ---- node B, a new key with the old one kept: restores, and seals again under the new key ----
        yield* Effect.gen(function*() {
          const { runId, parsed } = yield* send(threadId, bashStep("cat notes.txt"))
          assert.deepStrictEqual(outputsOf(parsed.chunks), [{ exitCode: 0, stdout: "written on node A\n", stderr: "" }])
          assert.strictEqual((yield* getRun(runId)).status, "completed")
          assert.strictEqual((yield* getThread(threadId)).workspace?.status, "active")
        }).pipe(Effect.provide(yield* node(newKey, [oldKey])))
        const second = yield* stored(threadId)
        assert.strictEqual(second.version, 2)
        assert.strictEqual(second.key_id, Snapshots.keyIdOf(newKey))
        // Archived again on node B (the tar differs), with the same file.
        const tar = gunzipSync(
          yield* Snapshots.sealerOf(newKey).open("workspace_snapshot", threadId, {
            keyId: Snapshots.keyIdOf(newKey),
            data: second.data
          })
        ).toString("latin1")
        assert.include(tar, "./notes.txt")
        assert.include(tar, "written on node A")

        // ---- node C, without the new key: the snapshot cannot be opened ----
        yield* Effect.gen(function*() {
          const { runId, parsed } = yield* send(threadId, bashStep("cat notes.txt"))
          assert.deepStrictEqual(outputsOf(parsed.chunks), [])
          const run = yield* getRun(runId)
          assert.strictEqual(run.status, "failed")
          assert.strictEqual(run.terminalReason, "snapshot_unavailable")
          assert.strictEqual(run.error?.code, "snapshot_unavailable")
          assert.include(
            run.error?.message ?? "",
            `it was sealed with master key ${Snapshots.keyIdOf(newKey)}, which is not configured`
          )
          assert.strictEqual((yield* getThread(threadId)).workspace?.status, "unavailable")
        }).pipe(Effect.provide(yield* node(unrelatedKey, [oldKey])))
        assert.strictEqual((yield* stored(threadId)).version, 2)
      }).pipe(Effect.scoped),
    180_000
  )
})

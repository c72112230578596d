/**
 * Workspace snapshots encrypted at rest (spec 7 `snapshot_unavailable`:
 * durable encrypted runtime state), through the service on the real sandbox
 * and checked against the database itself: the stored bytes are AES-256-GCM
 * ciphertext under the master key's id (no file name or content, no gzip
 * header), bound to their thread; a snapshot stored before sealing is read as
 * the plain archive and sealed by the next run; altered ciphertext, a snapshot
 * copied from another thread, and a snapshot that cannot be stored each end
 * the run `failed` with terminalReason and error code `snapshot_unavailable`,
 * the stream's only `error` chunk the run's own.
 */
import { PgClient } from "@effect/sql-pg"
import { assert } from "@effect/vitest"
import type { UIMessageChunk } from "ai"
import { Effect } from "effect"
import { gunzipSync } from "node:zlib"
import { agentWithThread, bashStep, getRun, getThread, outputsOf, send } from "../support/Conversation.ts"
import * as Snapshots from "../support/Snapshots.ts"
import * as TestServer from "../support/TestServer.ts"

const offline = { type: "managed", shell: true, network: { mode: "offline" } }
const sealer = Snapshots.sealerOf(TestServer.testMasterKey)

/** The thread's snapshot, which must exist. */
const stored = (threadId: string) =>
  Effect.gen(function*() {
    const row = yield* Snapshots.storedSnapshot(yield* PgClient.PgClient, threadId)
    if (row === undefined) return yield* Effect.die(new Error(`no snapshot of ${threadId}`))
    return row
  })

/** A workspace with one file written by its first run, and its stored snapshot. */
const writtenWorkspace = Effect.gen(function*() {
  const { thread } = yield* agentWithThread({ workspace: offline })
  const first = yield* send(thread.id, bashStep("echo kept > kept.txt && echo ok"))
  assert.deepStrictEqual(outputsOf(first.parsed.chunks), [{ exitCode: 0, stdout: "ok\n", stderr: "" }])
  return { threadId: thread.id, row: yield* stored(thread.id) }
})

/** The run ended failed with snapshot_unavailable, said once: its terminal chunk, its error, the stream's one error chunk. */
const assertSnapshotUnavailable = (runId: string, chunks: ReadonlyArray<UIMessageChunk>, says: string) =>
  Effect.gen(function*() {
    const run = yield* getRun(runId)
    assert.strictEqual(run.status, "failed")
    assert.strictEqual(run.terminalReason, "snapshot_unavailable")
    assert.deepInclude(run.error, { type: "api_error", code: "snapshot_unavailable" })
    assert.include(run.error?.message ?? "", says)
    assert.deepStrictEqual(chunks.filter((c) => c.type === "data-svc-terminal"), [
      { type: "data-svc-terminal", data: { terminalReason: "snapshot_unavailable" } }
    ])
    assert.deepStrictEqual(chunks.filter((c) => c.type === "error"), [
      { type: "error", errorText: run.error?.message ?? "" }
    ])
    assert.deepStrictEqual(chunks.at(-1), { type: "finish", finishReason: "error" })
  })

TestServer.suiteWith(TestServer.layerWithSql())("sealed workspace snapshots", (it) => {
  it.effect("are stored as ciphertext under the master key's id, without a file name or content, and open only for their thread", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ workspace: offline })
      // Name and content are made inside the sandbox, so that the run's own events do not hold them.
      yield* send(
        thread.id,
        bashStep("mkdir notes && printf 'PLAIN%s' -CONTENT-7d2e > \"notes/$(printf 'FILE%s' -NAME-41c9).txt\"")
      )
      const row = yield* stored(thread.id)
      assert.strictEqual(row.version, 1)
      assert.strictEqual(row.key_id, Snapshots.keyIdOf(TestServer.testMasterKey))
      assert.strictEqual(row.bytes, row.data.byteLength)
      assert.strictEqual(row.sha256, Snapshots.sha256(row.data))
      const raw = Buffer.from(row.data).toString("latin1")
      for (const plain of ["PLAIN-CONTENT-7d2e", "FILE-NAME-41c9", "notes/"]) assert.notInclude(raw, plain)
      // Not a gzip stream (1f 8b): the archive is inside the seal.
      assert.notDeepEqual([...row.data.subarray(0, 2)], [0x1f, 0x8b])

      const sealed = { keyId: Snapshots.keyIdOf(TestServer.testMasterKey), data: row.data }
      const tar = gunzipSync(yield* sealer.open("workspace_snapshot", thread.id, sealed)).toString("latin1")
      assert.include(tar, "notes/FILE-NAME-41c9.txt")
      assert.include(tar, "PLAIN-CONTENT-7d2e")
      // Bound to its thread: the same bytes do not open for another.
      const other = yield* Effect.flip(sealer.open("workspace_snapshot", "thread_other", sealed))
      assert.strictEqual(other._tag, "SealedUnreadable")
    }))

  it.effect("altered ciphertext (its SHA-256 updated to match) ends the next restore snapshot_unavailable", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const { threadId, row } = yield* writtenWorkspace
      const altered = Buffer.from(row.data)
      altered[altered.length >> 1] ^= 0x01
      yield* Snapshots.replaceSnapshot(sql, threadId, altered, row.key_id)

      const { runId, parsed } = yield* send(threadId, bashStep("cat kept.txt"))
      assert.deepStrictEqual(outputsOf(parsed.chunks), [])
      yield* assertSnapshotUnavailable(
        runId,
        parsed.chunks,
        `snapshot version 2 of the workspace cannot be decrypted: it failed authentication under master key ${row.key_id}`
      )
      assert.strictEqual((yield* getThread(threadId)).workspace?.status, "unavailable")
      // Kept as it is, never replaced.
      assert.strictEqual((yield* stored(threadId)).version, 2)
    }))

  it.effect("a snapshot copied from another thread's row does not open: snapshot_unavailable", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const source = yield* writtenWorkspace
      const target = yield* writtenWorkspace
      yield* Snapshots.replaceSnapshot(sql, target.threadId, source.row.data, source.row.key_id)

      const { runId, parsed } = yield* send(target.threadId, bashStep("cat kept.txt"))
      assert.deepStrictEqual(outputsOf(parsed.chunks), [])
      yield* assertSnapshotUnavailable(runId, parsed.chunks, "cannot be decrypted")
    }))

  it.effect("a snapshot stored before sealing (no key id: the plain archive) restores, and that run seals it", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const { threadId, row } = yield* writtenWorkspace
      const keyId = Snapshots.keyIdOf(TestServer.testMasterKey)
      const plain = yield* sealer.open("workspace_snapshot", threadId, { keyId, data: row.data })
      yield* Snapshots.replaceSnapshot(sql, threadId, plain, null)
      assert.deepInclude(yield* stored(threadId), { version: 2, key_id: null })

      // Version 2 is newer than this node's copy: it is restored, and although no file changed it is stored sealed.
      const { runId, parsed } = yield* send(threadId, bashStep("cat kept.txt"))
      assert.deepStrictEqual(outputsOf(parsed.chunks), [{ exitCode: 0, stdout: "kept\n", stderr: "" }])
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      const resealed = yield* stored(threadId)
      assert.strictEqual(resealed.version, 3)
      assert.strictEqual(resealed.key_id, keyId)
      assert.deepStrictEqual(
        yield* sealer.open("workspace_snapshot", threadId, { keyId, data: resealed.data }),
        new Uint8Array(plain)
      )
    }))

  it.effect("a snapshot that cannot be stored ends the run snapshot_unavailable; the next run stores it", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const { thread } = yield* agentWithThread({ workspace: offline })
      // The database refuses every write of a snapshot until the trigger is dropped.
      yield* Effect.acquireRelease(
        Effect.orDie(Effect.gen(function*() {
          yield* sql`CREATE FUNCTION refuse_snapshot() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN RAISE EXCEPTION 'snapshot storage refused by the test'; END $$`
          yield* sql`CREATE TRIGGER refuse_snapshot BEFORE INSERT OR UPDATE ON workspace_snapshots
            FOR EACH ROW EXECUTE FUNCTION refuse_snapshot()`
        })),
        () =>
          Effect.orDie(Effect.gen(function*() {
            yield* sql`DROP TRIGGER IF EXISTS refuse_snapshot ON workspace_snapshots`
            yield* sql`DROP FUNCTION IF EXISTS refuse_snapshot()`
          }))
      ).pipe(
        Effect.andThen(Effect.gen(function*() {
          const { runId, parsed } = yield* send(thread.id, bashStep("echo unsaved > unsaved.txt && echo ok"))
          // The command ran; its files could not be made durable.
          assert.deepStrictEqual(outputsOf(parsed.chunks), [{ exitCode: 0, stdout: "ok\n", stderr: "" }])
          yield* assertSnapshotUnavailable(runId, parsed.chunks, "the workspace snapshot could not be stored")
          assert.isUndefined(yield* Snapshots.storedSnapshot(sql, thread.id))
        })),
        Effect.scoped
      )
      // The files are still on this node; the next run's end stores them.
      const { runId, parsed } = yield* send(thread.id, bashStep("cat unsaved.txt"))
      assert.deepStrictEqual(outputsOf(parsed.chunks), [{ exitCode: 0, stdout: "unsaved\n", stderr: "" }])
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      assert.strictEqual((yield* stored(thread.id)).version, 1)
    }))
})

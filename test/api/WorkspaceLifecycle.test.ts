/**
 * The lifecycle of managed workspaces on TestClock, through the service on
 * the real sandbox: each run's end stores a snapshot of the files (only when
 * they changed); `idleMinutes` without a run -> `hibernated` (the local copy
 * released, the snapshot kept), the next run restores the files (`active`
 * again); `retentionDays` without use -> `archived` (snapshot and files
 * deleted), and the next run starts an empty workspace. A snapshot over
 * SVC_WORKSPACE_SNAPSHOT_MAX_BYTES is refused with an error in the stream, the
 * run still completes, and hibernation keeps such a workspace's files.
 */
import { PgClient } from "@effect/sql-pg"
import { assert } from "@effect/vitest"
import { Clock, Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { RunRecovery } from "../../src/runs/RunRecovery.ts"
import { agentWithThread, bashStep, getRun, getThread, outputsOf, send } from "../support/Conversation.ts"
import * as Snapshots from "../support/Snapshots.ts"
import * as TestServer from "../support/TestServer.ts"

const harness = (snapshotMaxBytes: number) =>
  TestServer.layerWithSql({
    workspaceSnapshotMaxBytes: snapshotMaxBytes,
    // The tests run each pass themselves after moving the clock by days: scheduled passes every
    // 6 hours keep a move of 2 days from running thousands of them.
    recoveryIntervalMs: 6 * 60 * 60 * 1000
  })

const offline = { type: "managed", shell: true, network: { mode: "offline" } }

const localCopy = (threadId: string) => existsSync(join(TestServer.testWorkspaceRoot, "workspaces", threadId))

/** The stored snapshot's version and size, if any. */
const snapshotOf = (threadId: string) =>
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const rows =
      yield* sql`SELECT version::int AS version, bytes::int AS bytes FROM workspace_snapshots WHERE thread_id = ${threadId}`
        .pipe(
          Effect.flatMap(
            Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ version: Schema.Number, bytes: Schema.Number })))
          ),
          Effect.orDie
        )
    return rows[0]
  })

TestServer.suiteWith(harness(16 * 1024 * 1024))("workspace lifecycle", (it) => {
  it.effect("idle past idleMinutes (default 30) -> hibernated with its files released; the next run restores them and is active", () =>
    Effect.gen(function*() {
      const recovery = yield* RunRecovery
      const { thread } = yield* agentWithThread({ workspace: offline })
      yield* send(thread.id, bashStep("mkdir -p notes && echo 'kept across hibernation' > notes/a.txt"))
      const first = yield* snapshotOf(thread.id)
      assert.strictEqual(first?.version, 1)
      assert.isAbove(first?.bytes ?? 0, 0)
      // A run that changes nothing stores no new snapshot.
      yield* send(thread.id, bashStep("cat notes/a.txt"))
      assert.strictEqual((yield* snapshotOf(thread.id))?.version, 1)
      const usedAt = yield* Clock.currentTimeMillis

      yield* TestClock.adjust("29 minutes")
      yield* recovery.pass
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "active")
      assert.isTrue(localCopy(thread.id))

      yield* TestClock.adjust("2 minutes")
      yield* recovery.pass
      // Hibernated by this pass or by the scheduled one the clock's move ran: once the 30 minutes were up.
      const hibernated = yield* getThread(thread.id)
      assert.strictEqual(hibernated.workspace?.status, "hibernated")
      assert.isAtLeast(Date.parse(hibernated.workspace?.updatedAt ?? ""), usedAt + 30 * 60 * 1000)
      assert.isAtMost(Date.parse(hibernated.workspace?.updatedAt ?? ""), yield* Clock.currentTimeMillis)
      assert.isFalse(localCopy(thread.id))

      const { runId, parsed } = yield* send(thread.id, bashStep("cat notes/a.txt"))
      assert.deepStrictEqual(outputsOf(parsed.chunks), [{
        exitCode: 0,
        stdout: "kept across hibernation\n",
        stderr: ""
      }])
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "active")
      assert.strictEqual((yield* snapshotOf(thread.id))?.version, 1)
    }))

  it.effect("retentionDays after the last use -> archived, snapshot and files deleted; the next run starts an empty workspace", () =>
    Effect.gen(function*() {
      const recovery = yield* RunRecovery
      const { thread } = yield* agentWithThread({
        workspace: { ...offline, lifecycle: { idleMinutes: 5, retentionDays: 2 } }
      })
      yield* send(thread.id, bashStep("echo old > old.txt"))
      assert.strictEqual((yield* snapshotOf(thread.id))?.version, 1)
      const lastUse = yield* Clock.currentTimeMillis

      yield* TestClock.adjust("6 minutes")
      yield* recovery.pass
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "hibernated")

      yield* TestClock.adjust("2 days")
      yield* recovery.pass
      // Archived by this pass or by a scheduled one the clock's move ran: once the 2 days were up.
      const archived = (yield* getThread(thread.id)).workspace
      assert.strictEqual(archived?.status, "archived")
      assert.isAtLeast(Date.parse(archived?.updatedAt ?? ""), lastUse + 2 * 24 * 60 * 60 * 1000)
      assert.isAtMost(Date.parse(archived?.updatedAt ?? ""), yield* Clock.currentTimeMillis)
      assert.isUndefined(yield* snapshotOf(thread.id))
      assert.isFalse(localCopy(thread.id))

      const { parsed } = yield* send(thread.id, bashStep("ls -A | wc -l"))
      assert.deepStrictEqual(outputsOf(parsed.chunks), [{ exitCode: 0, stdout: "0\n", stderr: "" }])
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "active")
    }))

  it.effect("a newer snapshot that tar cannot unpack ends the run failed with snapshot_unavailable; the workspace is unavailable", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const { thread } = yield* agentWithThread({ workspace: offline })
      yield* send(thread.id, bashStep("echo x > x.txt"))
      // As if another node had stored version 2: sealed for this thread under the master key, but no archive.
      const sealed = yield* Snapshots.sealerOf(TestServer.testMasterKey).seal(
        "workspace_snapshot",
        thread.id,
        Buffer.from("00ff00ff", "hex")
      )
      yield* Snapshots.replaceSnapshot(sql, thread.id, sealed.data, sealed.keyId)
      const { runId, parsed } = yield* send(thread.id, bashStep("cat x.txt"))
      assert.deepStrictEqual(outputsOf(parsed.chunks), [])
      assert.deepStrictEqual(parsed.chunks.find((c) => c.type === "data-svc-terminal"), {
        type: "data-svc-terminal",
        data: { terminalReason: "snapshot_unavailable" }
      })
      const run = yield* getRun(runId)
      assert.strictEqual(run.status, "failed")
      assert.strictEqual(run.terminalReason, "snapshot_unavailable")
      assert.strictEqual(run.error?.code, "snapshot_unavailable")
      assert.include(run.error?.message ?? "", "snapshot version 2 of the workspace cannot be unpacked")
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "unavailable")
      assert.strictEqual((yield* snapshotOf(thread.id))?.version, 2)
    }))

  it.effect("deleting the thread deletes its snapshot", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ workspace: offline })
      yield* send(thread.id, bashStep("echo x > x.txt"))
      assert.strictEqual((yield* snapshotOf(thread.id))?.version, 1)
      yield* TestServer.expectOk(yield* TestServer.request("DELETE", `/v1/threads/${thread.id}`), 200, Schema.Unknown)
      assert.isUndefined(yield* snapshotOf(thread.id))
      assert.isFalse(localCopy(thread.id))
    }))
})

TestServer.suiteWith(harness(4096))("a workspace over the snapshot size limit", (it) => {
  it.effect("is not stored: the stream says so, the run completes, the files stay on the node, also when hibernated", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ workspace: offline })
      const { runId, parsed } = yield* send(
        thread.id,
        bashStep("head -c 65536 /dev/urandom > noise.bin && echo written")
      )
      assert.deepStrictEqual(outputsOf(parsed.chunks), [{ exitCode: 0, stdout: "written\n", stderr: "" }])
      const errors = parsed.chunks.filter((c) => c.type === "error")
      assert.deepStrictEqual(errors, [{
        type: "error",
        errorText:
          "the workspace's snapshot is larger than SVC_WORKSPACE_SNAPSHOT_MAX_BYTES (4096 bytes) and was not stored; its files stay on this node only"
      }])
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      assert.isUndefined(yield* snapshotOf(thread.id))
      // Hibernated, it keeps its files on this node (the snapshot cannot hold them), and the next run finds them.
      yield* TestClock.adjust("31 minutes")
      yield* (yield* RunRecovery).pass
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "hibernated")
      assert.isTrue(localCopy(thread.id))
      const next = yield* send(thread.id, bashStep("wc -c < noise.bin"))
      assert.deepStrictEqual(outputsOf(next.parsed.chunks), [{ exitCode: 0, stdout: "65536\n", stderr: "" }])
      assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "active")
    }))
})

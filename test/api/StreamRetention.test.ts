/**
 * Retention of run streams on TestClock: SVC_EVENT_RETENTION_DAYS after a run
 * ended, the recovery pass deletes its stored chunks and keeps the run;
 * replaying its stream (with or without Last-Event-ID) then answers a short,
 * content-free stream that ends with terminalReason stream_replay_unavailable
 * and the run's usage receipt, which the `ai` package parses and folds.
 */
import { PgClient } from "@effect/sql-pg"
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { RunRecovery } from "../../src/runs/RunRecovery.ts"
import { agentWithThread, getRun, send, streamOf } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"

/** The service plus a SQL client on its database, to count what the purge left. */
const Harness = TestServer.layerWithSql({
  eventRetentionDays: 30,
  // The test runs the recovery pass itself: a background pass every 30 s of a 30-day jump is 86,400 passes.
  recoveryIntervalMs: 7 * 24 * 60 * 60 * 1000
})

const storedChunks = (runId: string) =>
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const rows = yield* sql`SELECT count(*)::int AS n FROM run_events WHERE run_id = ${runId}`.pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ n: Schema.Number })))),
      Effect.orDie
    )
    return rows[0]?.n ?? 0
  })

/** Each chunk with its frame id. */
const framed = (parsed: { readonly chunks: ReadonlyArray<unknown>; readonly ids: ReadonlyArray<number> }) =>
  parsed.chunks.map((chunk, i): { readonly id: number | undefined; readonly chunk: unknown } => ({
    id: parsed.ids[i],
    chunk
  }))

/** The replay past retention: content-free, ending with the run's terminal reason for it and its usage receipt. */
const unavailable = (runId: string, firstId: number, usage: unknown) => [
  { id: firstId, chunk: { type: "start", messageId: runId } },
  {
    id: firstId + 1,
    chunk: {
      type: "error",
      errorText: "This run ended longer ago than the event log's retention; its stream can no longer be replayed."
    }
  },
  { id: firstId + 2, chunk: { type: "data-svc-terminal", data: { terminalReason: "stream_replay_unavailable" } } },
  { id: firstId + 3, chunk: { type: "data-svc-usage", data: usage } },
  { id: firstId + 4, chunk: { type: "finish", finishReason: "error" } }
]

TestServer.suiteWith(Harness)("stream retention", (it) => {
  it.effect("30 days after a run ended its chunks are purged, the run stays, and its replay ends with stream_replay_unavailable", () =>
    Effect.gen(function*() {
      const recovery = yield* RunRecovery
      const { thread } = yield* agentWithThread()
      const old = yield* send(thread.id, "/tool lookup {}\n/text the secret answer")
      const before = yield* streamOf(old.runId)
      assert.strictEqual(before.chunks.at(-1)?.type, "finish")
      const stored = yield* storedChunks(old.runId)
      assert.isAbove(stored, 5)

      // Within the retention: replay is byte for byte, and the pass keeps the chunks.
      yield* TestClock.adjust("29 days")
      const recent = yield* send(thread.id, "/text newer")
      yield* recovery.pass
      assert.strictEqual(yield* storedChunks(old.runId), stored)
      assert.strictEqual((yield* streamOf(old.runId)).reply.text, before.reply.text)

      yield* TestClock.adjust("1 day")
      yield* TestClock.adjust("1 second")
      yield* recovery.pass
      assert.strictEqual(yield* storedChunks(old.runId), 0)
      assert.isAbove(yield* storedChunks(recent.runId), 0)
      const run = yield* getRun(old.runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.terminalReason, null)

      const replay = yield* streamOf(old.runId)
      assert.deepStrictEqual(framed(replay), unavailable(old.runId, 1, run.usage))
      assert.notInclude(replay.reply.text, "secret")
      assert.strictEqual(replay.message?.id, old.runId)
      const resumed = yield* streamOf(old.runId, "7")
      assert.deepStrictEqual(framed(resumed), unavailable(old.runId, 8, run.usage))
      // The newer run still replays in full.
      assert.strictEqual((yield* streamOf(recent.runId)).chunks.at(-1)?.type, "finish")
      assert.deepStrictEqual((yield* streamOf(recent.runId)).errors, [])
    }))
})

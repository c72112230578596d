/**
 * Retention of run streams on TestClock: SVC_EVENT_RETENTION_DAYS after a run
 * ended, the recovery pass deletes its stored chunks and keeps the run;
 * replaying its stream (with or without Last-Event-ID) then answers a short,
 * content-free stream that ends with terminalReason stream_replay_unavailable
 * and the run's usage receipt, which the `ai` package parses and folds. The
 * thread's history then rebuilds the run's answer from the steps the model saw.
 */
import { PgClient } from "@effect/sql-pg"
import { assert } from "@effect/vitest"
import { validateUIMessages } from "ai"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Page } from "../../domain/Page.ts"
import { ThreadMessage } from "../../domain/ThreadMessage.ts"
import { RunRecovery } from "../../src/runs/RunRecovery.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, callIdsOf, getRun, send, startRun, streamOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
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

  it.effect("past retention the thread's history rebuilds the answer from the steps the model saw, a held message kept", () =>
    Effect.gen(function*() {
      const recovery = yield* RunRecovery
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "kept", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const { runId } = yield* startRun(thread.id, { input: "/tool mcp__kept__wait" })
      yield* gate.waiting
      // A message sent while the run is blocked is held, then delivered at its next step.
      const busy = yield* TestServer.expectError(
        yield* TestServer.request("POST", `/v1/threads/${thread.id}/messages`, { body: { input: "/text noted" } }),
        409,
        "api_error",
        "thread_busy"
      )
      const followupId = String(busy.details?.["followup_id"])
      yield* gate.open
      const [callId] = callIdsOf((yield* streamOf(runId)).chunks)
      const history = Effect.flatMap(
        TestServer.request("GET", `/v1/threads/${thread.id}/messages`),
        (reply) => TestServer.expectOk(reply, 200, Page(ThreadMessage))
      )
      const before = yield* history
      const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value))
      const call = (output: unknown) => ({
        type: "tool-mcp__kept__wait",
        toolCallId: callId,
        state: "output-available",
        input: {},
        output
      })
      const held = { type: "data-svc-followup-replayed", data: { followupId, text: "/text noted" } }
      const answer = [{ type: "step-start" }, { type: "text", text: "noted", state: "done" }]
      // From the stream: the tool's output as it came, the held message where it was delivered, the run's end.
      assert.deepStrictEqual(json(before.data[1].parts.slice(0, 5)), [
        { type: "step-start" },
        call([{ type: "text", text: "gate opened" }]),
        held,
        ...answer
      ])
      assert.deepStrictEqual(before.data[1].parts.slice(5).map((p) => p.type), ["data-svc-terminal", "data-svc-usage"])

      yield* TestClock.adjust("31 days")
      yield* recovery.pass
      assert.strictEqual(yield* storedChunks(runId), 0)
      const after = yield* history
      assert.deepStrictEqual(after.data.map((m) => m.id), before.data.map((m) => m.id))
      assert.deepStrictEqual(after.data[0], before.data[0])
      // The tool's output as the model read it; no data parts but the held message.
      assert.deepStrictEqual(json(after.data[1].parts), [
        { type: "step-start" },
        call("<untrusted_data source=\"mcp__kept__wait\">\ngate opened\n</untrusted_data>"),
        held,
        ...answer
      ])
      yield* Effect.promise(() => validateUIMessages({ messages: json(after.data) }))
    }).pipe(Effect.scoped))
})

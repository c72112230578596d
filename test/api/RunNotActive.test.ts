/**
 * 409 run_not_active (spec 4.3, 7: "run not active and not yet in a returnable
 * terminal state") through the API. One route answers it: a worker's
 * sub-stream while its run has ended and the worker not yet (the run's end
 * stops its workers; staged here as a crash leaves it, the stop lost): neither
 * live under an active run nor final. Before, it is followed live; after, it
 * replays. Every other run route answers an ended run with its final state: its
 * stream replays, cancel returns the run, a message still held for it is 404
 * followup_not_found.
 */
import { PgClient } from "@effect/sql-pg"
import { assert } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Run } from "../../domain/Run.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, startRun, streamOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import { delegate, subStream, tasksAnnounced } from "../support/Subagents.ts"
import * as TestServer from "../support/TestServer.ts"

/** A gate MCP server registered as `name`, and an agent (with `capabilities`) using it. */
const gatedAgent = (name: string, capabilities: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const server = yield* Collection.toolServers.create({ name, transport: "http", url: gate.url })
    const { thread } = yield* agentWithThread({
      capabilities: { mcp: { toolServerIds: [server.id] }, ...capabilities }
    })
    return { gate, thread }
  })

TestServer.suiteWith(TestServer.layerWithSql({}, 2))("run_not_active", (it) => {
  it.effect("a worker's sub-stream while its run has ended and the worker not yet: 409 run_not_active; live before, replayed after", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const { gate, thread } = yield* gatedAgent("tree", { subagents: true })
      const root = yield* startRun(thread.id, {
        input: delegate({ label: "slow", prompt: "/tool mcp__tree__wait {}\n/text worker done" })
      })
      const [task] = yield* tasksAnnounced(root.runId, 1)
      yield* gate.waiting
      // Followed live while the run is active.
      const live = yield* Effect.forkChild(subStream(root.runId, task.workerRef))

      // The run ended, and the stop of its worker was lost (its process died in between).
      yield* sql`UPDATE runs SET status = 'cancelled', completed_at = updated_at WHERE id = ${root.runId}`
      const path = `/v1/runs/${root.runId}/workers/${task.workerRef}/stream`
      const refused = yield* TestServer.expectError(
        yield* TestServer.request("GET", path),
        409,
        "api_error",
        "run_not_active"
      )
      assert.strictEqual(
        refused.message,
        `Run '${root.runId}' has ended (cancelled) but its worker '${task.workerRef}' has not yet: the run's end stops it. Retry in a moment: once it has ended, its stream replays.`
      )
      // With Last-Event-ID too.
      yield* TestServer.expectError(
        yield* TestServer.request("GET", path, { headers: { "last-event-id": "2" } }),
        409,
        "api_error",
        "run_not_active"
      )

      // Once the worker ended, its transcript replays, as it was followed.
      yield* gate.open
      const followed = yield* Fiber.join(live)
      assert.deepStrictEqual(followed.chunks.at(-1), { type: "finish", finishReason: "stop" })
      const replayed = yield* subStream(root.runId, task.workerRef)
      assert.deepStrictEqual(replayed.chunks, followed.chunks)
    }).pipe(Effect.scoped))

  it.effect("every other run route answers an ended run with its final state, never run_not_active", () =>
    Effect.gen(function*() {
      const { gate, thread } = yield* gatedAgent("plain")
      const run = yield* startRun(thread.id, { input: "/tool mcp__plain__wait {}" })
      yield* gate.waiting
      // A message held for the active run, never delivered: the run is cancelled first.
      const busy = yield* TestServer.expectError(
        yield* TestServer.request("POST", `/v1/threads/${thread.id}/messages`, { body: { input: "later" } }),
        409,
        "api_error",
        "thread_busy"
      )
      const followupId = String(busy.details?.["followup_id"])
      const cancelled = yield* TestServer.expectOk(
        yield* TestServer.request("POST", `/v1/runs/${run.runId}/cancel`),
        200,
        Run
      )
      assert.strictEqual(cancelled.status, "cancelled")

      assert.strictEqual((yield* streamOf(run.runId)).chunks.at(-1)?.type, "abort")
      const again = yield* TestServer.expectOk(
        yield* TestServer.request("POST", `/v1/runs/${run.runId}/cancel`),
        200,
        Run
      )
      assert.deepStrictEqual(again, cancelled)
      yield* TestServer.expectError(
        yield* TestServer.request("DELETE", `/v1/runs/${run.runId}/followups/${followupId}`),
        404,
        "not_found",
        "followup_not_found"
      )
      yield* TestServer.expectError(
        yield* TestServer.request("GET", `/v1/runs/${run.runId}/workers/wkr_0000000000000000000001/stream`),
        404,
        "not_found",
        "worker_not_found"
      )
    }).pipe(Effect.scoped))
})

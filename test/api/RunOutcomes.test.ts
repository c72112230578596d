/**
 * The run outcomes of spec 7 beyond the run's own caps, over a real HTTP
 * listener on real PostgreSQL: the per-step time bound (step_duration_exceeded,
 * on TestClock, with a real MCP tool that never answers), the repeat-loop
 * halt (agent_loop_halted) and the platform's per-run cost ceiling
 * (per_run_cap_exceeded); and worker sub-streams of runs without workers.
 * Every stream is parsed and folded by the `ai` package.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Thread } from "../../domain/Thread.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, callIdsOf, firstDataOf, getRun, startRun, streamOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"

const types = (chunks: ReadonlyArray<{ readonly type: string }>) => chunks.map((c) => c.type)

const threadStatus = (threadId: string) =>
  Effect.map(
    Effect.flatMap(TestServer.request("GET", `/v1/threads/${threadId}`), (reply) =>
      TestServer.expectOk(reply, 200, Thread)),
    (thread) =>
      thread.status
  )

TestServer.suite({ maxStepMs: 5000 })("per-step time bound", (it) => {
  it.effect("a step past SVC_MAX_STEP_MS is interrupted: completed with step_duration_exceeded, usage so far, the stream ends normally", () =>
    Effect.gen(function*() {
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "stall", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const receipt = yield* startRun(thread.id, {
        input: "/tool mcp__stall__echo {\"text\":\"one\"}\n/tool mcp__stall__wait {}\n/text never"
      })
      yield* gate.waiting
      // The first step took no time; the second is bounded from its own start.
      yield* TestClock.adjust("4999 millis")
      assert.strictEqual((yield* getRun(receipt.runId)).status, "running")
      yield* TestClock.adjust("1 millis")
      const { chunks, message } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(types(chunks), [
        "start",
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "tool-output-error",
        "finish-step",
        "data-svc-terminal",
        "data-svc-usage",
        "finish"
      ])
      assert.deepStrictEqual(chunks[9], {
        type: "tool-output-error",
        toolCallId: callIdsOf(chunks)[1],
        errorText: "step_duration_exceeded: the step ran past its time bound."
      })
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: "step_duration_exceeded" })
      assert.deepStrictEqual(chunks.at(-1), { type: "finish", finishReason: "stop" })
      assert.isDefined(message)
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.terminalReason, "step_duration_exceeded")
      assert.isUndefined(run.error)
      // Usage so far: both model calls were metered; the interrupted step is not checkpointed but billed.
      assert.strictEqual(run.usage?.steps, 2)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-usage"), run.usage)
      assert.strictEqual(yield* threadStatus(thread.id), "idle")
    }).pipe(Effect.scoped))

  it.effect("steps within the bound are unaffected, however long the run takes in all", () =>
    Effect.gen(function*() {
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "slow", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const receipt = yield* startRun(thread.id, {
        input: "/tool mcp__slow__wait {}\n/tool mcp__slow__wait {}\n/text done"
      })
      yield* gate.waiting
      yield* TestClock.adjust("4000 millis")
      yield* gate.open
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: null })
    }).pipe(Effect.scoped))
})

TestServer.suite()("repeat-loop halt, worker sub-streams", (it) => {
  it.effect("the same tool call with the same input and result five times in a row fails the run with agent_loop_halted, no reference", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const receipt = yield* startRun(thread.id, {
        input: Array.from({ length: 8 }, () => "/tool lookup {\"q\": 1, \"page\": 2}").join("\n")
      })
      const { chunks, errors } = yield* streamOf(receipt.runId)
      assert.strictEqual(chunks.filter((c) => c.type === "finish-step").length, 5)
      assert.deepStrictEqual(types(chunks).slice(-4), ["error", "data-svc-terminal", "data-svc-usage", "finish"])
      const message =
        "The agent repeated the same tool call (lookup) with the same input and the same result 5 times in a row; the run was halted."
      assert.deepStrictEqual(errors, [message])
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: "agent_loop_halted" })
      assert.deepStrictEqual(chunks.at(-1), { type: "finish", finishReason: "error" })
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.status, "failed")
      assert.strictEqual(run.terminalReason, "agent_loop_halted")
      assert.deepStrictEqual(run.error, { type: "api_error", code: "agent_loop_halted", message })
      assert.strictEqual(run.usage?.steps, 5)
      assert.strictEqual(yield* threadStatus(thread.id), "idle")
    }))

  it.effect("four repeats, or calls whose input changes, are progress: the run goes on", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const four = yield* startRun(thread.id, {
        input: [...Array.from({ length: 4 }, () => "/tool lookup {}"), "/text ok"].join("\n")
      })
      assert.deepStrictEqual(firstDataOf((yield* streamOf(four.runId)).chunks, "data-svc-terminal"), {
        terminalReason: null
      })
      // `/steps 8` calls `noop` with a different input each step.
      const varied = yield* startRun(thread.id, { input: "/steps 8" })
      assert.deepStrictEqual(firstDataOf((yield* streamOf(varied.runId)).chunks, "data-svc-terminal"), {
        terminalReason: null
      })
      assert.strictEqual((yield* getRun(varied.runId)).usage?.steps, 8)
    }))

  it.effect("a worker sub-stream is scoped under its root: an unknown reference is 404 worker_not_found, active or ended; another workspace's run 403", () =>
    Effect.gen(function*() {
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "live", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const active = yield* startRun(thread.id, { input: "/tool mcp__live__wait {}" })
      yield* gate.waiting
      const ref = "wkr_0000000000000000000001"
      const workerPath = (runId: string) => `/v1/runs/${runId}/workers/${ref}/stream`
      const live = yield* TestServer.expectError(
        yield* TestServer.request("GET", workerPath(active.runId)),
        404,
        "not_found",
        "worker_not_found"
      )
      assert.strictEqual(
        live.message,
        `Run '${active.runId}' has no worker '${ref}': worker references come from the run's data-svc-task chunks.`
      )
      // A reference that cannot exist (another prefix, other characters) is 404 without a lookup.
      for (const bad of ["w1", "run_0000000000000000000001", "wkr_%00"]) {
        yield* TestServer.expectError(
          yield* TestServer.request("GET", `/v1/runs/${active.runId}/workers/${bad}/stream`),
          404,
          "not_found",
          "worker_not_found"
        )
      }
      yield* TestServer.expectError(
        yield* TestServer.request("GET", workerPath(active.runId), { key: TestServer.Keys.b }),
        403,
        "permission_error",
        "permission_denied"
      )
      yield* TestServer.request("POST", `/v1/runs/${active.runId}/cancel`)
      yield* TestServer.expectError(
        yield* TestServer.request("GET", workerPath(active.runId)),
        404,
        "not_found",
        "worker_not_found"
      )
      const done = yield* startRun(thread.id, { input: "hi" })
      yield* streamOf(done.runId)
      yield* TestServer.expectError(
        yield* TestServer.request("GET", workerPath(done.runId)),
        404,
        "not_found",
        "worker_not_found"
      )
      yield* TestServer.expectError(
        yield* TestServer.request("GET", workerPath("run_nope")),
        404,
        "not_found",
        "run_not_found"
      )
      // The run's own stream still replays it, and cancel still answers its final state.
      assert.strictEqual((yield* streamOf(done.runId)).chunks.at(-1)?.type, "finish")
      assert.strictEqual((yield* TestServer.request("POST", `/v1/runs/${done.runId}/cancel`)).status, 200)
    }).pipe(Effect.scoped))
})

TestServer.suite({ routePrices: "scripted=1000/1000", maxRunCents: 30 })("per-run cost ceiling", (it) => {
  it.effect("a run without a budget, or with one above SVC_MAX_RUN_CENTS, is stopped by the ceiling with per_run_cap_exceeded", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      for (const budget of [undefined, 500]) {
        const receipt = yield* startRun(thread.id, {
          input: "/steps 100",
          ...(budget === undefined ? {} : { budgetCents: budget })
        })
        const { chunks } = yield* streamOf(receipt.runId)
        assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: "per_run_cap_exceeded" })
        assert.deepStrictEqual(chunks.at(-1), { type: "finish", finishReason: "stop" })
        const run = yield* getRun(receipt.runId)
        assert.strictEqual(run.status, "completed")
        assert.strictEqual(run.terminalReason, "per_run_cap_exceeded")
        assert.isAtLeast(run.usage?.costCents ?? 0, 30)
        assert.isBelow(run.usage?.steps ?? 100, 100)
        assert.deepStrictEqual(firstDataOf(chunks, "data-svc-usage"), run.usage)
      }
    }))

  it.effect("a budget at or below the ceiling stops the run first, with budget_exceeded", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const receipt = yield* startRun(thread.id, { input: "/steps 100", budgetCents: 1 })
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: "budget_exceeded" })
      assert.strictEqual((yield* getRun(receipt.runId)).usage?.steps, 1)
    }))
})

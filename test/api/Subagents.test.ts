/**
 * Subagents (spec 1.2, 2.1.1, 2.3, 2.4, 4.3 rule 5, 6.1, 6.2, 7) on the
 * scripted model through the API: delegate_task fans out to worker runs
 * that stream under their root (each sub-stream valid for the `ai`
 * package), cancel of the root stops every worker, a worker's approval parks
 * the root and resuming continues the worker (hook body and tool headers
 * name the worker), delegate_task is gated like any tool, maxDurationMs
 * bounds the whole tree (TestClock), a worker's park expires like the root's,
 * and worker runs are not public runs. Costs: SubagentBilling.test.ts.
 */
import { assert } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { BatchResolveResult, Interaction } from "../../domain/Interaction.ts"
import { Page } from "../../domain/Page.ts"
import { Run } from "../../domain/Run.ts"
import { RunRecovery } from "../../src/runs/RunRecovery.ts"
import * as Collection from "../support/Collection.ts"
import {
  agentWithThread,
  dataOf,
  failureTextsOf,
  getRun,
  getThread,
  outputsOf,
  send,
  startRun,
  streamOf,
  successesOf,
  textOf
} from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import { HookServer, reply } from "../support/HookServer.ts"
import { interactions } from "../support/Interactions.ts"
import { delegate, subStream, tasksAnnounced, tasksOf, workerRunIdOf } from "../support/Subagents.ts"
import * as TestServer from "../support/TestServer.ts"

const waitTool = (server: string) => `/tool mcp__${server}__wait {}`

/** An agent with subagents and a gate MCP server named `name` (its `wait` blocks until the test opens it). */
const gatedAgent = (name: string, extra: Record<string, unknown> = {}, capabilities: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const server = yield* Collection.toolServers.create({ name, transport: "http", url: gate.url })
    const { thread } = yield* agentWithThread({
      capabilities: { subagents: true, mcp: { toolServerIds: [server.id] }, ...capabilities },
      ...extra
    })
    return { gate, thread }
  })

const Harness = Layer.mergeAll(TestServer.layer({ maxParkMs: 60_000 }), HookServer.layer)

TestServer.suiteWith(Harness)("subagents", (it) => {
  it.effect("fan-out: three tasks run as workers, each result comes back to the root, each sub-stream is valid for the ai package", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { subagents: true } })
      const prompts = ["/text alpha", "/show-tools", "/text gamma"]
      const { runId, parsed } = yield* send(
        thread.id,
        [
          delegate(
            { label: "one", prompt: prompts[0] },
            { label: "two", prompt: prompts[1] },
            { label: "three", prompt: prompts[2], role: "advisor" }
          ),
          "/text all done"
        ].join("\n")
      )
      const tasks = tasksOf(parsed.chunks)
      assert.deepStrictEqual(tasks.map((t) => [t.label, t.role]), [["one", "worker"], ["two", "worker"], [
        "three",
        "advisor"
      ]])
      for (const t of tasks) assert.match(t.workerRef, /^wkr_[0-9A-Za-z]{22}$/)
      // The root's stream: the tasks, then each call's result (the worker's final answer), then the root's answer.
      const outputs = outputsOf(parsed.chunks)
      assert.deepStrictEqual(outputs[0], { workerRef: tasks[0].workerRef, answer: "alpha" })
      assert.deepStrictEqual(outputs[2], { workerRef: tasks[2].workerRef, answer: "gamma" })
      // A worker's tools are the root's; below SVC_MAX_DELEGATION_DEPTH (2) delegate_task too (SubagentDepth.test.ts).
      const offered = JSON.parse((outputs[1] as { readonly answer: string }).answer) as ReadonlyArray<{ name: string }>
      assert.deepStrictEqual(offered.map((t) => t.name), ["delegate_task"])
      assert.strictEqual(textOf(parsed.message), "all done")
      assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
      assert.deepStrictEqual(parsed.ids, parsed.chunks.map((_, i) => i + 1))

      for (const [i, t] of tasks.entries()) {
        const sub = yield* subStream(runId, t.workerRef)
        assert.strictEqual(sub.chunks[0]?.type, "start")
        assert.deepStrictEqual(sub.chunks[1], {
          type: "data-svc-worker-meta",
          data: { role: t.role, label: t.label, status: "running", prompt: prompts[i] }
        })
        assert.deepStrictEqual(sub.chunks.at(-1), { type: "finish", finishReason: "stop" })
        assert.deepStrictEqual(sub.ids, sub.chunks.map((_, n) => n + 1))
        // Resumable after any frame, like a run's stream.
        const rest = yield* subStream(runId, t.workerRef, "2")
        assert.deepStrictEqual(rest.chunks, sub.chunks.slice(2))
        // A worker run is no public run: its own id is 404 run_not_found.
        const workerRunId = workerRunIdOf(sub.chunks)
        assert.match(workerRunId, /^run_/)
        assert.notStrictEqual(workerRunId, runId)
        yield* TestServer.expectError(
          yield* TestServer.request("GET", `/v1/runs/${workerRunId}`),
          404,
          "not_found",
          "run_not_found"
        )
        yield* TestServer.expectError(
          yield* TestServer.request("GET", `/v1/runs/${workerRunId}/stream`),
          404,
          "not_found",
          "run_not_found"
        )
        yield* TestServer.expectError(
          yield* TestServer.request("POST", `/v1/runs/${workerRunId}/cancel`),
          404,
          "not_found",
          "run_not_found"
        )
      }
      assert.strictEqual(textOf((yield* subStream(runId, tasks[0].workerRef)).message), "alpha")
      yield* TestServer.expectError(
        yield* TestServer.request("GET", `/v1/runs/${runId}/workers/wkr_0000000000000000000000/stream`),
        404,
        "not_found",
        "worker_not_found"
      )
      // Listed runs are root runs only; the root's usage totals the tree, a row per worker.
      const listed = yield* Effect.flatMap(
        TestServer.request("GET", `/v1/runs?threadId=${thread.id}`),
        (r) => TestServer.expectOk(r, 200, Page(Run))
      )
      assert.deepStrictEqual(listed.data.map((r) => r.id), [runId])
      const run = yield* getRun(runId)
      assert.strictEqual(run.status, "completed")
      const rows = run.usage?.subagentRuns ?? []
      assert.deepStrictEqual(
        rows.map((r) => [r.type, r.workerRef, r.label, r.role, r.status, r.credited, r.steps]).sort(),
        tasks.map((t) => ["subagent_run", t.workerRef, t.label, t.role, "completed", false, 1]).sort()
      )
      assert.strictEqual(run.usage?.steps, 5)
      assert.deepStrictEqual(dataOf(parsed.chunks, "data-svc-usage"), [run.usage])
      assert.deepStrictEqual(listed.data[0].usage, run.usage)
    }))

  it.effect("cancelling the root mid-task interrupts every worker; each sub-stream ends with abort", () =>
    Effect.gen(function*() {
      const { gate, thread } = yield* gatedAgent("held")
      const task = { prompt: [waitTool("held"), "/text never"].join("\n") }
      const receipt = yield* startRun(thread.id, { input: delegate({ label: "a", ...task }, { label: "b", ...task }) })
      const tasks = yield* tasksAnnounced(receipt.runId, 2)
      yield* gate.waiting
      const cancelled = yield* TestServer.expectOk(
        yield* TestServer.request("POST", `/v1/runs/${receipt.runId}/cancel`),
        200,
        Run
      )
      assert.strictEqual(cancelled.status, "cancelled")
      assert.deepStrictEqual((yield* streamOf(receipt.runId)).chunks.at(-1), { type: "abort", reason: "cancelled" })
      for (const t of tasks) {
        const sub = yield* subStream(receipt.runId, t.workerRef)
        assert.deepStrictEqual(sub.chunks.at(-1), { type: "abort", reason: "cancelled" })
      }
      assert.deepStrictEqual((yield* getRun(receipt.runId)).usage?.subagentRuns?.map((r) => r.status), [
        "cancelled",
        "cancelled"
      ])
      assert.strictEqual((yield* getThread(thread.id)).status, "idle")
      yield* gate.open
    }).pipe(Effect.scoped))

  it.effect("a worker's approval parks the root (waiting_for_approval); resolving it under the root continues the worker", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "reviewer",
        url: `${hooks.origin}/review`,
        secret: "whsec_workers_signing_secret"
      })
      // delegate_task itself is named by the approval policy: delegating needs no review here.
      const { gate, thread } = yield* gatedAgent("guarded", {
        approvals: { toolExecution: { hookId: hook.id }, autoAllow: ["delegate_task"] }
      })
      yield* hooks.answerWith(reply(200, { decision: "pause", reason: "A person decides." }))
      const before = (yield* hooks.received).length
      const prompt = [`/tool mcp__guarded__echo ${JSON.stringify({ text: "from the worker" })}`, "/text worker done"]
        .join("\n")
      const receipt = yield* startRun(thread.id, { input: delegate({ label: "guarded", prompt }) })
      const [task] = yield* tasksAnnounced(receipt.runId, 1)
      // The worker's stream ends its turn at the park, with the request.
      const parked = yield* subStream(receipt.runId, task.workerRef)
      const workerRunId = workerRunIdOf(parked.chunks)
      const [requested] = dataOf(parked.chunks, "data-svc-input-requested") as ReadonlyArray<{ interactionId: string }>
      assert.deepStrictEqual(parked.chunks.at(-1), { type: "finish", finishReason: "other" })
      // The hook was asked about the worker's call: its own run id, its root and its reference.
      const review = JSON.parse((yield* hooks.received)[before].body) as Record<string, unknown>
      assert.deepStrictEqual([review["runId"], review["rootRunId"], review["workerRef"], review["toolName"]], [
        workerRunId,
        receipt.runId,
        task.workerRef,
        "mcp__guarded__echo"
      ])
      assert.strictEqual((yield* getRun(receipt.runId)).status, "waiting_for_approval")
      const tree = yield* interactions(`rootRunId=${receipt.runId}`)
      assert.deepStrictEqual<unknown>(tree.map((i) => [i.id, i.runId, i.rootRunId, i.workerRef, i.status]), [
        [requested.interactionId, workerRunId, receipt.runId, task.workerRef, "pending"]
      ])
      assert.deepStrictEqual(yield* interactions(`runId=${receipt.runId}`), [])
      assert.strictEqual((yield* interactions(`runId=${workerRunId}`)).length, 1)
      // Resolved through the batch route under the root's id.
      const resolved = yield* TestServer.expectOk(
        yield* TestServer.request("POST", `/v1/runs/${receipt.runId}/interactions/resolve`, {
          body: {
            items: [{
              id: requested.interactionId,
              inputResponses: [{ requestId: requested.interactionId, optionId: "approve" }]
            }]
          }
        }),
        200,
        BatchResolveResult
      )
      assert.deepStrictEqual(resolved.items.map((i) => [String(i.id), i.status]), [[
        requested.interactionId,
        "resolved"
      ]])
      const root = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(outputsOf(root.chunks), [{ workerRef: task.workerRef, answer: "worker done" }])
      assert.strictEqual(textOf(root.message), "Result: worker done")
      assert.strictEqual((yield* getRun(receipt.runId)).status, "completed")
      // The worker went on in the same sub-stream: the approved call ran, with the tree's headers.
      const finished = yield* subStream(receipt.runId, task.workerRef)
      assert.deepStrictEqual(finished.chunks.at(-1), { type: "finish", finishReason: "stop" })
      assert.deepStrictEqual(outputsOf(finished.chunks), [[{ type: "text", text: "from the worker" }]])
      const call = gate.headers().find((h) => h["svc-worker-ref"] === task.workerRef)
      assert.deepStrictEqual([call?.["svc-run-id"], call?.["svc-root-run-id"]], [workerRunId, receipt.runId])
    }).pipe(Effect.scoped))

  it.effect("delegate_task is gated like any tool: the root parks on its approval, and the approved task then runs as a worker", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "gatekeeper",
        url: `${hooks.origin}/review`,
        secret: "whsec_delegate_signing_secret"
      })
      const { thread } = yield* agentWithThread({
        capabilities: { subagents: true },
        approvals: { toolExecution: { hookId: hook.id } }
      })
      yield* hooks.answerWith(reply(200, { decision: "pause" }))
      const before = (yield* hooks.received).length
      const receipt = yield* startRun(thread.id, {
        input: delegate({ label: "reviewed", prompt: "/text approved task" })
      })
      const parked = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(parked.chunks.at(-1), { type: "finish", finishReason: "other" })
      assert.deepStrictEqual(tasksOf(parked.chunks), [])
      const review = JSON.parse((yield* hooks.received)[before].body) as Record<string, unknown>
      assert.deepStrictEqual([review["toolName"], review["runId"], review["rootRunId"], "workerRef" in review], [
        "delegate_task",
        receipt.runId,
        receipt.runId,
        false
      ])
      const [pending] = yield* interactions(`runId=${receipt.runId}`)
      yield* TestServer.expectOk(
        yield* TestServer.request("POST", `/v1/interactions/${pending.id}/resolve`, {
          body: { inputResponses: [{ requestId: pending.id, optionId: "approve" }] }
        }),
        200,
        Interaction
      )
      const done = yield* streamOf(receipt.runId)
      const [task] = tasksOf(done.chunks)
      assert.strictEqual(task.label, "reviewed")
      assert.deepStrictEqual(outputsOf(done.chunks), [{ workerRef: task.workerRef, answer: "approved task" }])
      assert.strictEqual(textOf(done.message), "Result: approved task")
      assert.deepStrictEqual(done.chunks.at(-1), { type: "finish", finishReason: "stop" })
    }))

  it.effect("maxDurationMs bounds the whole tree (TestClock): a worker past the root's deadline stops, then the root", () =>
    Effect.gen(function*() {
      const { gate, thread } = yield* gatedAgent("slow")
      const receipt = yield* startRun(thread.id, {
        input: delegate({ label: "slow", prompt: [waitTool("slow"), "/text late"].join("\n") }),
        maxDurationMs: 60_000
      })
      yield* tasksAnnounced(receipt.runId, 1)
      yield* gate.waiting
      yield* TestClock.adjust("61 seconds")
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(dataOf(chunks, "data-svc-terminal"), [{ terminalReason: "max_duration_exceeded" }])
      const run = yield* getRun(receipt.runId)
      assert.deepStrictEqual([run.status, run.terminalReason], ["completed", "max_duration_exceeded"])
      assert.deepStrictEqual(run.usage?.subagentRuns?.map((r) => [r.status, r.terminalReason]), [[
        "completed",
        "max_duration_exceeded"
      ]])
      yield* gate.open
    }).pipe(Effect.scoped))

  it.effect("a worker's question expires like the root's park (interaction_timeout); the root reads a tool error and goes on", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { subagents: true, userInteraction: true } })
      const ask = `/tool ask_question ${
        JSON.stringify({ title: "Which?", questions: [{ id: "q", prompt: "Which one?" }] })
      }`
      const receipt = yield* startRun(thread.id, {
        input: delegate({ label: "asker", prompt: [ask, "/text answered"].join("\n") })
      })
      const [task] = yield* tasksAnnounced(receipt.runId, 1)
      yield* subStream(receipt.runId, task.workerRef)
      assert.strictEqual((yield* getRun(receipt.runId)).status, "waiting_for_input")
      yield* TestClock.adjust("61 seconds")
      yield* (yield* RunRecovery).pass
      const root = yield* streamOf(receipt.runId)
      const message =
        `worker_ended: The task 'asker' (${task.workerRef}) ended without an answer: it was cancelled (interaction_timeout).`
      assert.deepStrictEqual(
        failureTextsOf(root.chunks),
        [message]
      )
      assert.strictEqual(textOf(root.message), `Result: ${message}`)
      const run = yield* getRun(receipt.runId)
      assert.deepStrictEqual([run.status, run.terminalReason], ["completed", null])
      assert.deepStrictEqual(run.usage?.subagentRuns?.map((r) => [r.status, r.terminalReason]), [[
        "cancelled",
        "interaction_timeout"
      ]])
      assert.deepStrictEqual((yield* interactions(`rootRunId=${receipt.runId}`)).map((i) => i.status), ["cancelled"])
      assert.deepStrictEqual((yield* subStream(receipt.runId, task.workerRef)).chunks.at(-1), {
        type: "abort",
        reason: "interaction_timeout"
      })
    }))

  it.effect("delegate_task input: outputSchema gives the result a structured output; a bad input is a tool error the model reads and starts no worker", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { subagents: true } })
      const schema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] }
      const { runId, parsed } = yield* send(
        thread.id,
        delegate(
          { label: "structured", prompt: "/output {\"n\": 7}", outputSchema: schema },
          { label: "", prompt: "x" },
          { label: "ok", prompt: "x", role: "boss" },
          { label: "ok", prompt: "x", outputSchema: { type: "nope" } }
        )
      )
      const [task] = tasksOf(parsed.chunks)
      assert.deepStrictEqual(tasksOf(parsed.chunks).map((t) => t.label), ["structured"])
      assert.deepStrictEqual(successesOf(parsed.chunks), [{
        workerRef: task.workerRef,
        answer: "{\"n\": 7}",
        output: { n: 7 }
      }])
      const errors = failureTextsOf(parsed.chunks)
      assert.strictEqual(errors.length, 3)
      assert.deepStrictEqual(errors.slice(0, 2), [
        "invalid_tool_input: Invalid input for delegate_task: label: label must not be empty",
        "invalid_tool_input: Invalid input for delegate_task: role: Expected \"worker\" | \"advisor\""
      ])
      assert.match(
        errors[2],
        /^invalid_tool_input: Invalid input for delegate_task: outputSchema is not a valid JSON Schema: /
      )
      assert.strictEqual((yield* getRun(runId)).usage?.subagentRuns?.length, 1)
    }))
})

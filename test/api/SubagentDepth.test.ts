/**
 * Nested delegation (spec 1.2, 4.3 rule 5) and SVC_MAX_DELEGATION_DEPTH on
 * the scripted model: at the default depth 2 a worker delegates once more,
 * its worker (the root's grandchild) is not offered delegate_task, streams
 * under the root and is listed in the root's usage; its answer comes back to
 * the worker that delegated, whose answer comes back to the root. At depth 1
 * workers are not offered delegate_task. The root's budget and maxSteps bound
 * every level.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import {
  agentWithThread,
  dataOf,
  getRun,
  outputsOf,
  send,
  startRun,
  streamOf,
  textOf
} from "../support/Conversation.ts"
import { delegate, subStream, tasksOf } from "../support/Subagents.ts"
import * as TestServer from "../support/TestServer.ts"

const subagents = { capabilities: { subagents: true } }

/** The names of the tools a `/show-tools` answer lists. */
const toolNames = (answer: unknown) =>
  (JSON.parse(String(answer)) as ReadonlyArray<{ readonly name: string }>).map((t) => t.name)

/**
 * A root's subagent_run rows by label (listed oldest first, then by reference: members created at one
 * instant of the TestClock come in reference order).
 */
const byLabel = <R extends { readonly label: string }>(rows: ReadonlyArray<R> | undefined) =>
  [...(rows ?? [])].sort((a, b) => a.label.localeCompare(b.label))

/** The answer of a delegate_task result. */
const answerOf = (output: unknown) => (output as { readonly answer: string }).answer

TestServer.suite()("SVC_MAX_DELEGATION_DEPTH=2 (default)", (it) => {
  it.effect("a worker delegates once more: its worker answers it, streams under the root, is listed in the root's usage and is offered no delegate_task", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread(subagents)
      const outer = [delegate({ label: "inner", prompt: "/show-tools" }), "/text outer done"].join("\n")
      const { runId, parsed } = yield* send(
        thread.id,
        [delegate({ label: "outer", prompt: outer }), "/text root done"].join("\n")
      )
      const [outerTask] = tasksOf(parsed.chunks)
      assert.deepStrictEqual(tasksOf(parsed.chunks), [{
        label: "outer",
        workerRef: outerTask.workerRef,
        role: "worker"
      }])
      assert.deepStrictEqual(outputsOf(parsed.chunks), [{ workerRef: outerTask.workerRef, answer: "outer done" }])
      assert.strictEqual(textOf(parsed.message), "root done")

      // The worker's sub-stream announces its own task and reads its answer: the grandchild's tools, without delegate_task.
      const outerStream = yield* subStream(runId, outerTask.workerRef)
      const [innerTask] = tasksOf(outerStream.chunks)
      assert.deepStrictEqual(tasksOf(outerStream.chunks), [{
        label: "inner",
        workerRef: innerTask.workerRef,
        role: "worker"
      }])
      const [innerResult] = outputsOf(outerStream.chunks)
      assert.deepStrictEqual(innerResult, { workerRef: innerTask.workerRef, answer: answerOf(innerResult) })
      assert.deepStrictEqual(toolNames(answerOf(innerResult)), [])
      assert.strictEqual(textOf(outerStream.message), "outer done")

      // The grandchild streams under the root like any worker of the tree.
      const innerStream = yield* subStream(runId, innerTask.workerRef)
      assert.deepStrictEqual(innerStream.chunks[1], {
        type: "data-svc-worker-meta",
        data: { role: "worker", label: "inner", status: "running", prompt: "/show-tools" }
      })
      assert.deepStrictEqual(innerStream.chunks.at(-1), { type: "finish", finishReason: "stop" })

      // The root's usage totals every level, a row per member.
      const run = yield* getRun(runId)
      assert.deepStrictEqual(byLabel(run.usage?.subagentRuns).map((r) => [r.label, r.workerRef, r.status, r.steps]), [
        ["inner", innerTask.workerRef, "completed", 1],
        ["outer", outerTask.workerRef, "completed", 2]
      ])
      assert.strictEqual(run.usage?.steps, 2 + 2 + 1)
      assert.deepStrictEqual(dataOf(parsed.chunks, "data-svc-usage"), [run.usage])
    }))

  it.effect("the root's grandchild cannot delegate: delegate_task is no tool of it (unknown_tool), and no worker starts", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread(subagents)
      const inner = delegate({ label: "too deep", prompt: "/text never" })
      const outer = [delegate({ label: "inner", prompt: inner }), "/text outer done"].join("\n")
      const { runId, parsed } = yield* send(thread.id, delegate({ label: "outer", prompt: outer }))
      const [outerTask] = tasksOf(parsed.chunks)
      const [innerTask] = tasksOf((yield* subStream(runId, outerTask.workerRef)).chunks)
      const innerStream = yield* subStream(runId, innerTask.workerRef)
      assert.deepStrictEqual(tasksOf(innerStream.chunks), [])
      assert.strictEqual(textOf(innerStream.message), "Result: unknown_tool: there is no tool named 'delegate_task'.")
      const rows = byLabel((yield* getRun(runId)).usage?.subagentRuns)
      assert.deepStrictEqual(rows.map((r) => [r.label, r.status]), [["inner", "completed"], ["outer", "completed"]])
    }))

  it.effect("maxSteps counts in every loop of the tree: the root's grandchild stops at the root's maxSteps", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread(subagents)
      const outer = [delegate({ label: "inner", prompt: "/steps 30" }), "/text outer done"].join("\n")
      const receipt = yield* startRun(thread.id, {
        input: [delegate({ label: "outer", prompt: outer }), "/text root done"].join("\n"),
        maxSteps: 3
      })
      yield* streamOf(receipt.runId)
      const run = yield* getRun(receipt.runId)
      assert.deepStrictEqual([run.status, run.terminalReason], ["completed", null])
      assert.deepStrictEqual(byLabel(run.usage?.subagentRuns).map((r) => [r.label, r.terminalReason, r.steps]), [
        ["inner", "max_steps_exceeded", 3],
        ["outer", null, 2]
      ])
    }))
})

TestServer.suite({ routePrices: "scripted=1000/1000" })("nested delegation under a budget", (it) => {
  it.effect("the root's budgetCents bounds its grandchild: it stops with budget_exceeded, then its delegator, then the root", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread(subagents)
      const outer = [delegate({ label: "inner", prompt: "/steps 30" }), "/text outer done"].join("\n")
      const receipt = yield* startRun(thread.id, {
        input: [delegate({ label: "outer", prompt: outer }), "/text root done"].join("\n"),
        budgetCents: 3000
      })
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(dataOf(chunks, "data-svc-terminal"), [{ terminalReason: "budget_exceeded" }])
      const run = yield* getRun(receipt.runId)
      assert.deepStrictEqual([run.status, run.terminalReason], ["completed", "budget_exceeded"])
      const rows = byLabel(run.usage?.subagentRuns)
      assert.deepStrictEqual(rows.map((r) => [r.label, r.terminalReason]), [
        ["inner", "budget_exceeded"],
        ["outer", "budget_exceeded"]
      ])
      const inner = rows[0]
      assert.isTrue(inner.steps >= 1 && inner.steps < 30, `the grandchild took ${inner.steps} steps`)
      assert.isAtLeast(run.usage?.costCents ?? 0, 3000)
    }))
})

TestServer.suite({ maxDelegationDepth: 1 })("SVC_MAX_DELEGATION_DEPTH=1", (it) => {
  it.effect("workers are not offered delegate_task: one that calls it reads unknown_tool, and no worker starts", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread(subagents)
      const { runId, parsed } = yield* send(
        thread.id,
        delegate(
          { label: "tools", prompt: "/show-tools" },
          { label: "tries", prompt: delegate({ label: "nested", prompt: "/text never" }) }
        )
      )
      const [tools, tries] = tasksOf(parsed.chunks)
      const [shown, tried] = outputsOf(parsed.chunks)
      assert.deepStrictEqual(shown, { workerRef: tools.workerRef, answer: answerOf(shown) })
      assert.deepStrictEqual(toolNames(answerOf(shown)), [])
      assert.deepStrictEqual(tried, {
        workerRef: tries.workerRef,
        answer: "Result: unknown_tool: there is no tool named 'delegate_task'."
      })
      assert.deepStrictEqual(tasksOf((yield* subStream(runId, tries.workerRef)).chunks), [])
      assert.deepStrictEqual(byLabel((yield* getRun(runId)).usage?.subagentRuns).map((r) => r.label), [
        "tools",
        "tries"
      ])
    }))
})

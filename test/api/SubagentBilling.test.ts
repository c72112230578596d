/**
 * What a run tree costs (spec 2.3, 7): the root's budgetCents bounds the
 * whole tree (workers stop with budget_exceeded, then the root), and an
 * engine fault in a worker is credited: billed $0 and listed as a $0
 * subagent_run row of the root's usage, while the root goes on.
 */
import { PgClient } from "@effect/sql-pg"
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { agentWithThread, dataOf, getRun, send, startRun, streamOf, textOf } from "../support/Conversation.ts"
import { delegate, subStream, tasksOf } from "../support/Subagents.ts"
import * as TestServer from "../support/TestServer.ts"

TestServer.suite({ routePrices: "scripted=1000/1000" })("subagent budget", (it) => {
  it.effect("budgetCents bounds the tree: workers stop with budget_exceeded, then the root ends with budget_exceeded", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { subagents: true } })
      const receipt = yield* startRun(thread.id, {
        input: [delegate({ label: "a", prompt: "/steps 30" }, { label: "b", prompt: "/steps 30" }), "/text never"].join(
          "\n"
        ),
        budgetCents: 3000
      })
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(dataOf(chunks, "data-svc-terminal"), [{ terminalReason: "budget_exceeded" }])
      const run = yield* getRun(receipt.runId)
      assert.deepStrictEqual([run.status, run.terminalReason], ["completed", "budget_exceeded"])
      const rows = run.usage?.subagentRuns ?? []
      assert.deepStrictEqual(rows.map((r) => r.terminalReason), ["budget_exceeded", "budget_exceeded"])
      for (const r of rows) assert.isTrue(r.steps >= 1 && r.steps < 30, `worker steps ${r.steps}`)
      // The root took its one delegating step; the tree's cost reached the budget.
      assert.strictEqual(run.usage?.steps, 1 + rows.reduce((n, r) => n + r.steps, 0))
      assert.isAtLeast(run.usage?.costCents ?? 0, 3000)
      assert.deepStrictEqual(dataOf(chunks, "data-svc-usage"), [run.usage])
    }))
})

/** The service plus a SQL client on its database, to inject a fault. */
const FaultHarness = TestServer.layerWithSql({ routePrices: "scripted=1000/1000" })

TestServer.suiteWith(FaultHarness)("subagent engine fault", (it) => {
  it.effect("an engine fault in a worker is credited: billed $0, listed as a $0 subagent_run row; the root gets a tool error and goes on", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      // A worker's question cannot be stored: its loop dies mid-run.
      yield* sql.unsafe(`CREATE FUNCTION svc_test_fault() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected fault'; END $$`)
      yield* sql.unsafe(`CREATE TRIGGER svc_test_fault BEFORE INSERT ON interactions FOR EACH ROW
        WHEN (NEW.worker_ref IS NOT NULL) EXECUTE FUNCTION svc_test_fault()`)
      const { thread } = yield* agentWithThread({ capabilities: { subagents: true, userInteraction: true } })
      const ask = `/tool ask_question ${JSON.stringify({ title: "Which?" })}`
      const { runId, parsed } = yield* send(
        thread.id,
        delegate({ label: "faulty", prompt: ["/tool noop {}", ask].join("\n") })
      )
      const [task] = tasksOf(parsed.chunks)
      const message =
        `worker_ended: The task 'faulty' (${task.workerRef}) ended without an answer: it failed: The run failed because of an internal error.`
      assert.strictEqual(textOf(parsed.message), `Result: ${message}`)
      const run = yield* getRun(runId)
      assert.deepStrictEqual([run.status, run.terminalReason], ["completed", null])
      const [row] = run.usage?.subagentRuns ?? []
      assert.deepStrictEqual([row.status, row.terminalReason, row.credited, row.costCents, row.steps], [
        "failed",
        "engine_fault",
        true,
        0,
        2
      ])
      assert.isAbove(row.inputTokens, 0)
      // The root pays for its own steps only.
      assert.isAbove(run.usage?.costCents ?? 0, 0)
      assert.strictEqual(
        run.usage?.costCents,
        (run.usage?.inputTokens ?? 0) - row.inputTokens + (run.usage?.outputTokens ?? 0) - row.outputTokens
      )
      const sub = yield* subStream(runId, task.workerRef)
      assert.strictEqual((dataOf(sub.chunks, "data-svc-usage")[0] as { costCents: number }).costCents, 0)
      assert.deepStrictEqual(dataOf(sub.chunks, "data-svc-terminal"), [{ terminalReason: "engine_fault" }])
    }).pipe(Effect.orDie))
})

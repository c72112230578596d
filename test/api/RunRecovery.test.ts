/**
 * The recovery pass on TestClock: a run left active with no executor (its
 * dispatch was lost, or its runner handed it off) is started again and completes; a run that cannot be
 * executed is finalized as run_recovery_reaped after five attempts, with its
 * usage receipt, and its thread is freed.
 */
import { PgClient } from "@effect/sql-pg"
import { assert } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Run, RunReceipt } from "../../domain/Run.ts"
import { Thread } from "../../domain/Thread.ts"
import { RunRecovery } from "../../src/runs/RunRecovery.ts"
import { RecoveryRepo } from "../../src/store/RecoveryRepo.ts"
import { nowIso } from "../../src/Time.ts"
import { agentWithThread, getRun, startRun, streamOf } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"
import { parseWithAi } from "../support/UiStream.ts"

/** The service plus a SQL client on its database, to stage what a crash leaves behind. */
const Harness = RecoveryRepo.layer.pipe(Layer.provideMerge(TestServer.layerWithSql({}, 2)))

/** Stages what a crash leaves behind: a run copied from `from`, active on `threadId` and holding it. */
const stageRun = (options: {
  readonly id: string
  readonly from: string
  readonly threadId: string
  readonly status: "queued" | "running"
  /** The input of the copied plan; undefined: a plan that cannot be read. */
  readonly input: string | undefined
  readonly updatedAt: string
  readonly executor: string | null
  readonly attempts: number
  readonly idempotencyKey?: string
}) =>
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    yield* sql`INSERT INTO runs (id, organization_id, workspace_id, thread_id, agent_id, status, usage, config, plan, metadata,
        created_at, updated_at, started_at, executor, recovery_attempts, idempotency_key)
      SELECT ${options.id}, organization_id, workspace_id, ${options.threadId}, agent_id, ${options.status},
        '{"inputTokens":0,"outputTokens":0,"totalTokens":0,"costCents":0,"steps":0}'::jsonb, config,
        ${
      options.input === undefined ? sql`'{}'::jsonb` : sql`jsonb_set(plan, '{input}', to_jsonb(${options.input}::text))`
    }, metadata,
        '1969-01-01T00:00:00.000Z', ${options.updatedAt}, NULL, ${options.executor}, ${options.attempts}, ${
      options.idempotencyKey ?? null
    }
      FROM runs WHERE id = ${options.from}`
    yield* sql`UPDATE threads SET status = 'running', active_run_id = ${options.id} WHERE id = ${options.threadId}`
  })

/** A thread whose first run completed: a staged run copies that run's agent, config and plan. */
const afterFirstTurn = Effect.gen(function*() {
  const { thread } = yield* agentWithThread()
  const done = yield* startRun(thread.id, { input: "first" })
  yield* streamOf(done.runId)
  return { thread, done }
})

/**
 * The next recovery pass (30 s of the service's clock) dispatches the run again, and it completes. The
 * pass is also run here: the scheduled one starts once the cluster placed its singleton, on real time.
 */
const nextPassCompletes = (runId: string) =>
  Effect.gen(function*() {
    const api = yield* TestServer.TestApi
    yield* TestClock.adjust("30 seconds")
    yield* (yield* RunRecovery).pass
    const resumed = yield* api.request("GET", `/v1/runs/${runId}/stream`)
    const parsed = yield* Effect.orDie(parseWithAi(resumed.text))
    assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
    const run = yield* TestServer.expectOk(yield* api.request("GET", `/v1/runs/${runId}`), 200, Run)
    assert.strictEqual(run.status, "completed")
  })

TestServer.suiteWith(Harness)("run recovery", (it) => {
  // What a runner killed between creating a run and starting it leaves (queued), and what a lost resume or a
  // runner handing the run's shard to another leaves (running): an active run with no executor, updated just now.
  for (
    const [status, id, when] of [["queued", "run_lostdispatchrecent0001", "5 s"], [
      "running",
      "run_handedoffnoexecutor001",
      "2.5 s"
    ]] as const
  ) {
    it.effect(`a ${status} run with no executor is dispatched again at the first pass after ${when}, long before it would count as stalled`, () =>
      Effect.gen(function*() {
        const { thread, done } = yield* afterFirstTurn
        yield* stageRun({
          id,
          from: done.runId,
          threadId: thread.id,
          status,
          input: "second",
          updatedAt: yield* nowIso,
          executor: null,
          attempts: 0
        })
        yield* nextPassCompletes(id)
      }))
  }

  // Only the Start that follows a run's creation may run it from the row its creation left in memory (no claim:
  // its claim stays 0); any later Start reads and claims the run, since it may have executed elsewhere meanwhile.
  it.effect("a turn's first execution runs from memory without a claim; a Start of the recovery pass claims the run", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const claimOf = (runId: string) =>
        Effect.map(
          sql<{ readonly attempt: number }>`SELECT attempt FROM runs WHERE id = ${runId}`,
          (rows) => rows[0]?.attempt
        )
      const { thread, done } = yield* afterFirstTurn
      assert.strictEqual(yield* claimOf(done.runId), 0)
      const id = "run_recoveredclaims000001"
      yield* stageRun({
        id,
        from: done.runId,
        threadId: thread.id,
        status: "running",
        input: "second",
        updatedAt: yield* nowIso,
        executor: null,
        attempts: 0
      })
      yield* nextPassCompletes(id)
      assert.strictEqual(yield* claimOf(id), 1)
    }))

  it.effect("a run whose executing process was killed a moment ago (its heartbeat is fresh, its database sessions are gone) is dispatched again at the next pass", () =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const { thread, done } = yield* afterFirstTurn
      // The service's own sessions carry its node id; a killed process's sessions end with it, its last beat stays behind.
      const [own] = yield* sql<{ readonly executor: string }>`SELECT executor FROM runs WHERE id = ${done.runId}`
      assert.deepStrictEqual(
        yield* sql`SELECT 1 AS named FROM pg_stat_activity WHERE application_name = ${own?.executor ?? ""} LIMIT 1`,
        [{ named: 1 }]
      )
      yield* sql`INSERT INTO svc_nodes (id, started_at, heartbeat_at) VALUES ('node_killedamomentago00001', now(), now() + interval '1 hour')`
      const orphan = "run_killedamomentago000001"
      yield* stageRun({
        id: orphan,
        from: done.runId,
        threadId: thread.id,
        status: "running",
        input: "second",
        updatedAt: "9999-01-01T00:00:00.000Z",
        executor: "node_killedamomentago00001",
        attempts: 0
      })
      yield* nextPassCompletes(orphan)
    }))

  it.effect("a run start retried with its Idempotency-Key after its answer was lost answers with the run it started, and starts it", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread, done } = yield* afterFirstTurn
      // The node that created the run died before answering (and before starting it): the key's record is gone, the run holds the thread.
      const started = "run_answerlostwithnode0001"
      yield* stageRun({
        id: started,
        from: done.runId,
        threadId: thread.id,
        status: "queued",
        input: "second",
        updatedAt: "9999-01-01T00:00:00.000Z",
        executor: null,
        attempts: 0,
        idempotencyKey: "retry-after-crash"
      })
      const retried = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "second" },
        headers: { accept: "application/json", "idempotency-key": "retry-after-crash" }
      })
      const receipt = yield* TestServer.expectOk(retried, 200, RunReceipt)
      assert.strictEqual(receipt.runId, started)
      assert.strictEqual(receipt.createdAt, "1969-01-01T00:00:00.000Z")
      const { chunks } = yield* streamOf(started)
      assert.deepStrictEqual(chunks.at(-1), { type: "finish", finishReason: "stop" })
      assert.strictEqual((yield* getRun(started)).status, "completed")
      // Another request (another key) is still refused while a run holds the thread: only the same request is recognized.
      yield* stageRun({
        id: "run_holdsthethread00000001",
        from: done.runId,
        threadId: thread.id,
        status: "queued",
        input: "third",
        updatedAt: "9999-01-01T00:00:00.000Z",
        executor: null,
        attempts: 0,
        idempotencyKey: "the-first-key"
      })
      const other = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "third" },
        headers: { accept: "application/json", "idempotency-key": "another-key" }
      })
      yield* TestServer.expectError(other, 409, "api_error", "thread_busy")
    }))

  it.effect("a stalled run with no executor is started again; a run that cannot be resumed is reaped after five attempts", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const sql = yield* PgClient.PgClient
      const { thread } = yield* agentWithThread()
      const done = yield* startRun(thread.id, { input: "first" })
      yield* api.request("GET", `/v1/runs/${done.runId}/stream`)
      yield* TestClock.adjust("1 second")

      // What a crash between committing a run and dispatching it leaves: a queued run holding the thread.
      const lost = "run_lostdispatch0000000001"
      yield* stageRun({
        id: lost,
        from: done.runId,
        threadId: thread.id,
        status: "queued",
        input: "second",
        updatedAt: "1969-01-01T00:00:00.000Z",
        executor: null,
        attempts: 0
      })

      // The recovery pass runs every 30 s of the service's clock: the next one finds the stalled run.
      yield* nextPassCompletes(lost)
      const idle = yield* TestServer.expectOk(yield* api.request("GET", `/v1/threads/${thread.id}`), 200, Thread)
      assert.strictEqual(idle.status, "idle")

      // A run whose stored plan cannot be executed, already re-dispatched five times: the next pass reaps it.
      const broken = "run_brokenplan000000000001"
      yield* stageRun({
        id: broken,
        from: done.runId,
        threadId: thread.id,
        status: "running",
        input: undefined,
        updatedAt: "1969-01-01T00:00:00.000Z",
        executor: null,
        attempts: 5
      })
      yield* TestClock.adjust("30 seconds")
      yield* api.request("GET", `/v1/runs/${broken}/stream`)
      const reaped = yield* TestServer.expectOk(yield* api.request("GET", `/v1/runs/${broken}`), 200, Run)
      assert.strictEqual(reaped.status, "failed")
      assert.strictEqual(reaped.terminalReason, "run_recovery_reaped")
      assert.strictEqual(reaped.error?.code, "internal_error")
      assert.match(reaped.error?.reference ?? "", /^inc_/)
      const attempts = yield* sql`SELECT recovery_attempts FROM runs WHERE id = ${broken}`
      assert.deepStrictEqual(attempts, [{ recovery_attempts: 6 }])
      const stream = yield* api.request("GET", `/v1/runs/${broken}/stream`)
      const reapedStream = yield* Effect.orDie(parseWithAi(stream.text))
      assert.deepStrictEqual(reapedStream.chunks.map((c) => c.type), [
        "start",
        "error",
        "data-svc-terminal",
        "data-svc-usage",
        "finish"
      ])
      // Its receipt is what it metered, and its usage at its terminal state (spec 2.3).
      const receipt = reapedStream.chunks.find((c) => c.type === "data-svc-usage")
      assert.deepStrictEqual(receipt !== undefined && "data" in receipt ? receipt.data : undefined, reaped.usage)
      const freed = yield* TestServer.expectOk(yield* api.request("GET", `/v1/threads/${thread.id}`), 200, Thread)
      assert.strictEqual(freed.status, "idle")

      // Retention of the cluster's message storage: a run's persisted messages (Cancel; Start is not
      // persisted) go once the run ended before the cutoff.
      const { thread: other } = yield* agentWithThread()
      const idleRun = "run_cancelledwhilequeued01"
      // Queued and not yet stalled: left alone by the pass until the cancel.
      yield* stageRun({
        id: idleRun,
        from: done.runId,
        threadId: other.id,
        status: "queued",
        input: "third",
        updatedAt: "9999-01-01T00:00:00.000Z",
        executor: null,
        attempts: 0
      })
      const cancelled = yield* TestServer.expectOk(yield* api.request("POST", `/v1/runs/${idleRun}/cancel`), 200, Run)
      assert.strictEqual(cancelled.status, "cancelled")
      const countMessages = (runId: string) =>
        sql`SELECT count(*)::int AS n FROM cluster_messages WHERE entity_id = ${runId}`
      assert.deepStrictEqual(yield* countMessages(lost), [{ n: 0 }])
      assert.deepStrictEqual(yield* countMessages(idleRun), [{ n: 1 }])
      const repo = yield* RecoveryRepo
      yield* repo.purgeDeliveredMessages(done.createdAt)
      assert.deepStrictEqual(yield* countMessages(idleRun), [{ n: 1 }])
      yield* repo.purgeDeliveredMessages("9999-01-01T00:00:00.000Z")
      assert.deepStrictEqual(yield* countMessages(idleRun), [{ n: 0 }])
      assert.deepStrictEqual(yield* sql`SELECT count(*)::int AS n FROM cluster_replies`, [{ n: 0 }])
    }))

  it.effect("a run whose executing process stopped beating is dispatched again at the next pass, long before it would count as stalled", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const sql = yield* PgClient.PgClient
      const { thread } = yield* agentWithThread()
      const done = yield* startRun(thread.id, { input: "first" })
      yield* api.request("GET", `/v1/runs/${done.runId}/stream`)
      const executor = yield* sql<{ readonly executor: string }>`SELECT executor FROM runs WHERE id = ${done.runId}`
      assert.match(executor[0]?.executor ?? "", /^node_/)

      // What kill -9 of the executing process leaves: a running run, updated just now, whose executor has no heartbeat.
      const orphan = "run_orphanedbyadeadnode001"
      yield* stageRun({
        id: orphan,
        from: done.runId,
        threadId: thread.id,
        status: "running",
        input: "second",
        updatedAt: "9999-01-01T00:00:00.000Z",
        executor: "node_deadprocess0000000001",
        attempts: 0
      })

      yield* nextPassCompletes(orphan)
      const after = yield* sql<
        { readonly executor: string; readonly recovery_attempts: number }
      >`SELECT executor, recovery_attempts FROM runs WHERE id = ${orphan}`
      assert.notStrictEqual(after[0]?.executor, "node_deadprocess0000000001")
      // Dispatched again once, then it completed a step: the count of attempts without progress starts over.
      assert.strictEqual(after[0]?.recovery_attempts, 0)
    }))
})

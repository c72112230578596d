/**
 * One execution of a run at a time (migration 0020_fencing): each execution, and
 * each finalization outside one, claims the run; from then on every write of
 * an earlier claim (stream chunks with what they carry, the heartbeat, a park,
 * a resumed step's checkpoint) changes nothing, and its execution learns that
 * it lost the run. The stored stream stays one stream: ids 1..n, one end. An
 * execution's claim names its process as the executor at once; an execution
 * that stops without ending the run (its shard moved) releases it, unless a
 * later claim took it.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { Chunk } from "../../../domain/Chunk.ts"
import type { RunId } from "../../../domain/Ids.ts"
import { ActiveStatuses } from "../../../domain/Run.ts"
import { EventLog, fenced, runChange } from "../../../src/runs/EventLog.ts"
import { Finalize } from "../../../src/runs/Finalize.ts"
import { RunRepo } from "../../../src/store/RunRepo.ts"
import { nowIso } from "../../../src/Time.ts"
import * as RunStage from "../../support/RunStage.ts"

const storedOf = (runId: RunId) =>
  Effect.gen(function*() {
    const rows = yield* (yield* EventLog).read(runId, 0)
    return rows.map((r) => ({ seq: r.seq, chunk: r.chunk }))
  })

const claim = (runId: RunId) =>
  Effect.gen(function*() {
    const found = yield* (yield* RunRepo).claim(runId, ActiveStatuses)
    return Option.isSome(found) ? found.value : yield* Effect.die(new Error(`run ${runId} cannot be claimed`))
  })

const textStart: Chunk = { type: "text-start", id: "txt_1" }

layer(RunStage.layer, { timeout: RunStage.setupTimeout })("fencing", (it) => {
  it.effect("an execution whose claim a later one took writes nothing more and learns it lost the run", () =>
    Effect.gen(function*() {
      const events = yield* EventLog
      const repo = yield* RunRepo
      const staged = yield* RunStage.stageRun()
      const first = yield* claim(staged.id)
      const stale = yield* events.writer(staged.id, { attempt: first.attempt })
      yield* stale.emit({ type: "start", messageId: staged.id })
      yield* stale.emit(textStart)
      yield* stale.commit([runChange({ status: "running", executor: "node_stale" })])
      assert.isFalse(yield* stale.isLost)

      // Another node takes the run over (the recovery pass took the first for dead).
      const second = yield* claim(staged.id)
      assert.strictEqual(second.attempt, first.attempt + 1)
      const current = yield* events.writer(staged.id, { attempt: second.attempt })
      assert.strictEqual(current.startSeq, 2)

      // The stale execution goes on: its chunks, its status change, its checkpoint, its heartbeat, its park.
      yield* stale.emit({ type: "text-delta", id: "txt_1", delta: "stale" })
      const flushed = yield* fenced(
        stale,
        Effect.as(stale.commit([runChange({ status: "completed", executor: "node_stale" })]), "went on")
      )
      assert.strictEqual(flushed, undefined)
      assert.isTrue(yield* stale.isLost)
      const now = yield* nowIso
      assert.isFalse(yield* repo.touch(staged.id, first.attempt, now))
      assert.isTrue(yield* repo.touch(staged.id, second.attempt, now))

      yield* current.emit({ type: "reset-step" })
      yield* current.emit({ type: "text-delta", id: "txt_1", delta: "current" })
      yield* current.commit([runChange({ executor: "node_current" })])
      assert.deepStrictEqual(yield* storedOf(staged.id), [
        { seq: 1, chunk: { type: "start", messageId: staged.id } },
        { seq: 2, chunk: textStart },
        { seq: 3, chunk: { type: "reset-step" } },
        { seq: 4, chunk: { type: "text-delta", id: "txt_1", delta: "current" } }
      ])
      assert.strictEqual((yield* RunStage.reload(staged.id)).run.status, "running")
      assert.strictEqual((yield* RunStage.reload(staged.id)).attempt, second.attempt)
      assert.strictEqual(yield* repo.checkpoints(staged.id).pipe(Effect.map((c) => c.length)), 0)
    }).pipe(Effect.scoped))

  it.effect("the recovery pass's reap fences out an execution still going: the stream ends once, with the reap's end", () =>
    Effect.gen(function*() {
      const events = yield* EventLog
      const staged = yield* RunStage.stageRun()
      const first = yield* claim(staged.id)
      const stale = yield* events.writer(staged.id, { attempt: first.attempt })
      yield* stale.emit({ type: "start", messageId: staged.id })
      yield* stale.commit([runChange({ status: "running", executor: "node_stale" })])

      yield* (yield* Finalize).reap(staged.id)
      // The execution's own end comes too late: nothing of it is stored.
      yield* stale.emit({ type: "data-svc-terminal", data: { terminalReason: null } })
      yield* stale.emit({ type: "finish", finishReason: "stop" })
      assert.strictEqual(
        yield* fenced(stale, Effect.as(stale.commit([runChange({ status: "completed" })]), "ended")),
        undefined
      )

      const stored = yield* storedOf(staged.id)
      assert.deepStrictEqual(stored.map((s) => s.seq), [1, 2, 3, 4, 5])
      assert.deepStrictEqual(stored.map((s) => s.chunk.type), [
        "start",
        "error",
        "data-svc-terminal",
        "data-svc-usage",
        "finish"
      ])
      const after = yield* RunStage.reload(staged.id)
      assert.strictEqual(after.run.status, "failed")
      assert.strictEqual(after.run.terminalReason, "run_recovery_reaped")
    }).pipe(Effect.scoped))

  it.effect("a claim names its executor at once; releasing a run clears it, only for the latest claim and only while it runs", () =>
    Effect.gen(function*() {
      const repo = yield* RunRepo
      const sql = yield* PgClient.PgClient
      const executorOf = (runId: RunId) =>
        Effect.map(
          sql<{ readonly executor: string | null }>`SELECT executor FROM runs WHERE id = ${runId}`.pipe(Effect.orDie),
          (rows) => rows[0]?.executor
        )
      const staged = yield* RunStage.stageRun()
      const first = yield* repo.claim(staged.id, ActiveStatuses, "node_one").pipe(Effect.map(Option.getOrThrow))
      assert.strictEqual(yield* executorOf(staged.id), "node_one")
      const second = yield* repo.claim(staged.id, ActiveStatuses, "node_two").pipe(Effect.map(Option.getOrThrow))
      assert.strictEqual(yield* executorOf(staged.id), "node_two")

      // The first execution stops (its shard moved): it is not the run's executor any more, so it releases nothing.
      assert.isFalse(yield* repo.release(staged.id, first.attempt, yield* nowIso))
      assert.strictEqual(yield* executorOf(staged.id), "node_two")
      // The second one stops without ending the run: the run has no executor, the recovery pass dispatches it again.
      assert.isTrue(yield* repo.release(staged.id, second.attempt, yield* nowIso))
      assert.isNull(yield* executorOf(staged.id))

      // A parked run keeps no executor, whoever claims it (a Start delivered again finds it still parked).
      yield* sql`UPDATE runs SET status = 'waiting_for_approval' WHERE id = ${staged.id}`.pipe(Effect.orDie)
      const parked = yield* repo.claim(staged.id, ActiveStatuses, "node_three").pipe(Effect.map(Option.getOrThrow))
      assert.isNull(yield* executorOf(staged.id))
      assert.isFalse(yield* repo.release(staged.id, parked.attempt, yield* nowIso))
      assert.strictEqual((yield* RunStage.reload(staged.id)).run.status, "waiting_for_approval")
    }))
})

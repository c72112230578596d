/**
 * How a run ends, on its own: for runs staged as a turn creates them (and
 * parked through the real Parking), each outcome, a cancel, the max-park
 * expiry and the recovery pass's reap. Each test reads back the exact chunks
 * appended (stored by the time the call returns), the run's row, its
 * interactions and whether its thread was released.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Chunk } from "../../../domain/Chunk.ts"
import type { ToolCall } from "../../../domain/Conversation.ts"
import { RunId, type ThreadId, ToolCallId } from "../../../domain/Ids.ts"
import type { Interaction } from "../../../domain/Interaction.ts"
import { type Run, type UsageTotal, ZeroUsage } from "../../../domain/Run.ts"
import { EventLog, runChange } from "../../../src/runs/EventLog.ts"
import { Finalize } from "../../../src/runs/Finalize.ts"
import { completed, failed, type Outcome } from "../../../src/runs/Outcome.ts"
import { Parking } from "../../../src/runs/Parking.ts"
import { InteractionRepo } from "../../../src/store/InteractionRepo.ts"
import { RunRepo } from "../../../src/store/RunRepo.ts"
import { Threads } from "../../../src/threads/Threads.ts"
import { nowIso } from "../../../src/Time.ts"
import * as RunStage from "../../support/RunStage.ts"

const usage: UsageTotal = { inputTokens: 120, outputTokens: 30, totalTokens: 150, costCents: 0.75, steps: 2 }

/** Chunks stored after `afterSeq`. */
const chunksAfter = (runId: RunId, afterSeq: number) =>
  Effect.gen(function*() {
    const stored = yield* (yield* EventLog).read(runId, afterSeq)
    assert.deepStrictEqual(stored.map((s) => s.seq), stored.map((_, i) => afterSeq + i + 1))
    return stored.map((s): Chunk => s.chunk)
  })

/** The run's pending approval was cancelled at `now` by the run's end. */
const assertApprovalCancelled = (runId: RunId, before: Interaction, now: string) =>
  Effect.gen(function*() {
    const [after] = yield* (yield* InteractionRepo).ofRun(runId)
    assert.deepStrictEqual(after.interaction, {
      ...before,
      status: "cancelled",
      decision: "cancel",
      expiresAt: null,
      resolvedAt: now,
      updatedAt: now
    })
  })

/** Whether the thread is free again: idle, with no active run. */
const threadOf = (threadId: ThreadId) =>
  Effect.gen(function*() {
    const thread = yield* Effect.orDie((yield* Threads).get(RunStage.principal, threadId))
    return { status: thread.status, activeRun: yield* (yield* RunRepo).activeRun(threadId) }
  })

type ThreadState = Effect.Success<ReturnType<typeof threadOf>>

const released: ThreadState = { status: "idle", activeRun: null }
const heldBy = (runId: RunId): ThreadState => ({ status: "running", activeRun: runId })

/**
 * A run as the loop leaves it before finalization: started (status running,
 * its first chunks stored); returns its row and the last stored sequence number.
 */
const startedRun = Effect.gen(function*() {
  const row = yield* RunStage.stageRun()
  const seq = yield* Effect.scoped(Effect.gen(function*() {
    const writer = yield* (yield* EventLog).writer(row.id, { fresh: true })
    yield* writer.emit({ type: "start", messageId: row.id })
    yield* writer.emit({ type: "start-step" })
    yield* writer.commit([runChange({ status: "running", startedAt: yield* nowIso })])
    return yield* (yield* EventLog).lastSeq(row.id)
  }))
  return { row: yield* RunStage.reload(row.id), seq }
})

/** A started run that completed: its row as it ended, and the last sequence number before its end. */
const endedRun = Effect.gen(function*() {
  const { row, seq } = yield* startedRun
  yield* Effect.scoped(Effect.gen(function*() {
    yield* (yield* Finalize).outcome(row, yield* (yield* EventLog).writer(row.id), completed(null), usage)
  }))
  return { row, seq, ended: yield* RunStage.reload(row.id) }
})

const call: ToolCall = { id: ToolCallId.make("call_1"), name: "mcp__files__write", input: { path: "a.txt" } }

/**
 * A run parked on an approval of `call` through Parking, its turn ended by
 * Finalize (finish 'other'); returns its row, its interaction, the last sequence number
 * stored before Finalize (`parkedSeq`), the chunks Finalize appended (`ended`) and the last one after it (`seq`).
 */
const parkedRun = Effect.gen(function*() {
  const { row } = yield* startedRun
  const parked = yield* Effect.scoped(Effect.gen(function*() {
    const writer = yield* (yield* EventLog).writer(row.id)
    yield* writer.emit({ type: "tool-input-start", toolCallId: call.id, toolName: call.name })
    yield* writer.emit({ type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.input })
    const outcome = yield* (yield* Parking).park(RunStage.approvalStep(row, writer, call, usage))
    yield* writer.flush
    const before = yield* (yield* EventLog).lastSeq(row.id)
    yield* (yield* Finalize).outcome(row, writer, outcome, usage)
    // Read while the writer is still open: stored by the time outcome returns.
    return { parkedSeq: before, ended: yield* chunksAfter(row.id, before) }
  }))
  const [interaction] = yield* (yield* InteractionRepo).ofRun(row.id)
  return { row: yield* RunStage.reload(row.id), interaction, ...parked, seq: yield* (yield* EventLog).lastSeq(row.id) }
})

/** Moves TestClock on, so the end's timestamps differ from the start's; returns the new now. */
const later = Effect.andThen(TestClock.adjust("1 minute"), nowIso)

interface OutcomeCase {
  readonly name: string
  readonly outcome: Outcome
  /** The chunks the outcome appends. */
  readonly chunks: ReadonlyArray<Chunk>
  /** The run's fields that change (with completedAt and usage). */
  readonly run: Pick<Run, "status" | "terminalReason"> & { readonly error?: Run["error"] }
}

const outcomes: ReadonlyArray<OutcomeCase> = [
  {
    name: "Completed without output: terminal (reason null), usage receipt, finish 'stop'; completed",
    outcome: completed(null),
    chunks: [
      { type: "data-svc-terminal", data: { terminalReason: null } },
      { type: "data-svc-usage", data: usage },
      { type: "finish", finishReason: "stop" }
    ],
    run: { status: "completed", terminalReason: null }
  },
  {
    name: "Completed with output: the structured result in the terminal chunk",
    outcome: completed(null, { answer: 42, tags: ["a"] }),
    chunks: [
      { type: "data-svc-terminal", data: { terminalReason: null, output: { answer: 42, tags: ["a"] } } },
      { type: "data-svc-usage", data: usage },
      { type: "finish", finishReason: "stop" }
    ],
    run: { status: "completed", terminalReason: null }
  },
  {
    name: "Completed by a cap: its terminal reason on the chunk and the row",
    outcome: completed("max_steps_exceeded"),
    chunks: [
      { type: "data-svc-terminal", data: { terminalReason: "max_steps_exceeded" } },
      { type: "data-svc-usage", data: usage },
      { type: "finish", finishReason: "stop" }
    ],
    run: { status: "completed", terminalReason: "max_steps_exceeded" }
  },
  {
    name: "Failed: an error chunk with the message first, finish 'error'; failed with the error",
    outcome: failed("upstream_unavailable", "The model provider is unavailable: HTTP 503"),
    chunks: [
      { type: "error", errorText: "The model provider is unavailable: HTTP 503" },
      { type: "data-svc-terminal", data: { terminalReason: null } },
      { type: "data-svc-usage", data: usage },
      { type: "finish", finishReason: "error" }
    ],
    run: {
      status: "failed",
      terminalReason: null,
      error: { type: "api_error", code: "upstream_unavailable", message: "The model provider is unavailable: HTTP 503" }
    }
  },
  {
    name: "Failed with a terminal reason and an incident reference: both kept",
    outcome: failed(
      "internal_error",
      "The run failed because of an internal error.",
      "engine_fault",
      "inc_0000000000000000000042"
    ),
    chunks: [
      { type: "error", errorText: "The run failed because of an internal error." },
      { type: "data-svc-terminal", data: { terminalReason: "engine_fault" } },
      { type: "data-svc-usage", data: usage },
      { type: "finish", finishReason: "error" }
    ],
    run: {
      status: "failed",
      terminalReason: "engine_fault",
      error: {
        type: "api_error",
        code: "internal_error",
        message: "The run failed because of an internal error.",
        reference: "inc_0000000000000000000042"
      }
    }
  }
]

layer(RunStage.layer, { timeout: RunStage.setupTimeout })("Finalize", (it) => {
  it.effect.each(outcomes)("outcome $name; the thread is released", (c) =>
    Effect.gen(function*() {
      const { row, seq } = yield* startedRun
      const now = yield* later
      yield* Effect.scoped(Effect.gen(function*() {
        const writer = yield* (yield* EventLog).writer(row.id)
        yield* (yield* Finalize).outcome(row, writer, c.outcome, usage)
        // Stored, with the row and the thread, by the time outcome returns.
        assert.deepStrictEqual(yield* chunksAfter(row.id, seq), c.chunks)
        const expected: Run = {
          ...row.run,
          status: c.run.status,
          terminalReason: c.run.terminalReason,
          usage,
          completedAt: now
        }
        assert.deepStrictEqual(
          (yield* RunStage.reload(row.id)).run,
          c.run.error === undefined ? expected : { ...expected, error: c.run.error }
        )
        assert.deepStrictEqual(yield* threadOf(row.run.threadId), released)
      }))
    }))

  it.effect("outcome Parked: the turn's stream ends with finish 'other'; the run stays parked and holds its thread", () =>
    Effect.gen(function*() {
      const { row, parkedSeq, ended, seq } = yield* parkedRun
      assert.deepStrictEqual(ended, [{ type: "finish", finishReason: "other" }])
      assert.deepStrictEqual((yield* chunksAfter(row.id, 0)).map((c) => c.type), [
        "start",
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "data-svc-input-requested",
        "finish"
      ])
      assert.strictEqual(seq, parkedSeq + 1)
      assert.strictEqual(row.run.status, "waiting_for_approval")
      assert.strictEqual(row.run.terminalReason, null)
      assert.strictEqual(row.run.completedAt, null)
      assert.deepStrictEqual(row.park?.pending, [
        {
          toolCallId: ToolCallId.make("call_1"),
          interactionId: (yield* (yield* InteractionRepo).ofRun(row.id))[0].id,
          kind: "approval_request",
          remember: false
        }
      ])
      assert.deepStrictEqual(yield* threadOf(row.run.threadId), heldBy(row.id))
    }))

  it.effect("outcome StillParked: nothing is written; the run and its thread are untouched", () =>
    Effect.gen(function*() {
      const { row, seq } = yield* parkedRun
      yield* later
      yield* Effect.scoped(Effect.gen(function*() {
        const writer = yield* (yield* EventLog).writer(row.id)
        yield* (yield* Finalize).outcome(row, writer, { _tag: "StillParked" }, usage)
      }))
      assert.deepStrictEqual(yield* chunksAfter(row.id, seq), [])
      assert.deepStrictEqual(yield* RunStage.reload(row.id), row)
      assert.deepStrictEqual(yield* threadOf(row.run.threadId), heldBy(row.id))
    }))

  it.effect("cancelled (the run's fiber interrupted): terminal chunk, usage receipt, abort 'cancelled'; cancelled, terminalReason null, thread released", () =>
    Effect.gen(function*() {
      const { row, seq } = yield* startedRun
      const now = yield* later
      const usage = { inputTokens: 12, outputTokens: 3, totalTokens: 15, costCents: 0, steps: 1 }
      yield* Effect.scoped(Effect.gen(function*() {
        const writer = yield* (yield* EventLog).writer(row.id)
        yield* (yield* Finalize).cancelled(row, writer, usage)
        assert.deepStrictEqual(yield* chunksAfter(row.id, seq), [
          { type: "data-svc-terminal", data: { terminalReason: null } },
          { type: "data-svc-usage", data: usage },
          { type: "abort", reason: "cancelled" }
        ])
      }))
      const after = yield* RunStage.reload(row.id)
      assert.deepStrictEqual(after.run, { ...row.run, status: "cancelled", terminalReason: null, completedAt: now })
      assert.deepStrictEqual(yield* threadOf(row.run.threadId), released)
    }))

  it.effect("cancelIdle of a parked run: abort 'cancelled', the park dropped, its approval cancelled, thread released", () =>
    Effect.gen(function*() {
      const { row, interaction, seq } = yield* parkedRun
      const now = yield* later
      yield* (yield* Finalize).cancelIdle(row.id)
      assert.deepStrictEqual(yield* chunksAfter(row.id, seq), [
        { type: "data-svc-terminal", data: { terminalReason: null } },
        { type: "data-svc-usage", data: row.run.usage ?? ZeroUsage },
        { type: "abort", reason: "cancelled" }
      ])
      const after = yield* RunStage.reload(row.id)
      assert.deepStrictEqual(after.run, { ...row.run, status: "cancelled", terminalReason: null, completedAt: now })
      assert.strictEqual(after.park, null)
      assert.strictEqual(after.parkDeadline, null)
      yield* assertApprovalCancelled(row.id, interaction.interaction, now)
      assert.deepStrictEqual(yield* threadOf(row.run.threadId), released)
    }))

  it.effect("cancelIdle of a run that never started: its stream is start then abort", () =>
    Effect.gen(function*() {
      const row = yield* RunStage.stageRun()
      const now = yield* later
      yield* (yield* Finalize).cancelIdle(row.id)
      assert.deepStrictEqual(yield* chunksAfter(row.id, 0), [
        { type: "start", messageId: row.id },
        { type: "data-svc-terminal", data: { terminalReason: null } },
        { type: "data-svc-usage", data: ZeroUsage },
        { type: "abort", reason: "cancelled" }
      ])
      assert.deepStrictEqual((yield* RunStage.reload(row.id)).run, {
        ...row.run,
        status: "cancelled",
        completedAt: now
      })
      assert.deepStrictEqual(yield* threadOf(row.run.threadId), released)
    }))

  it.effect("cancelIdle of a run that already ended, or of no run: nothing written, nothing changed", () =>
    Effect.gen(function*() {
      const { row, seq, ended } = yield* endedRun
      yield* later
      yield* (yield* Finalize).cancelIdle(row.id)
      yield* (yield* Finalize).cancelIdle(RunId.make("run_0000000000000000000000"))
      assert.strictEqual((yield* chunksAfter(row.id, seq)).length, 3)
      assert.deepStrictEqual(yield* RunStage.reload(row.id), ended)
    }))

  it.effect("expire of a parked run: terminal and usage receipt then abort 'interaction_timeout'; cancelled, approval cancelled, thread released", () =>
    Effect.gen(function*() {
      const { row, interaction, seq } = yield* parkedRun
      yield* TestClock.adjust("15 days")
      const now = yield* nowIso
      yield* (yield* Finalize).expire(row.id)
      assert.deepStrictEqual(yield* chunksAfter(row.id, seq), [
        { type: "data-svc-terminal", data: { terminalReason: "interaction_timeout" } },
        { type: "data-svc-usage", data: usage },
        { type: "abort", reason: "interaction_timeout" }
      ])
      const after = yield* RunStage.reload(row.id)
      assert.deepStrictEqual(after.run, {
        ...row.run,
        status: "cancelled",
        terminalReason: "interaction_timeout",
        completedAt: now
      })
      assert.strictEqual(after.park, null)
      assert.strictEqual(after.parkDeadline, null)
      yield* assertApprovalCancelled(row.id, interaction.interaction, now)
      assert.deepStrictEqual(yield* threadOf(row.run.threadId), released)
    }))

  it.effect("expire of a run that is not parked: nothing written, nothing changed", () =>
    Effect.gen(function*() {
      const { row, seq } = yield* startedRun
      yield* later
      yield* (yield* Finalize).expire(row.id)
      assert.deepStrictEqual(yield* chunksAfter(row.id, seq), [])
      assert.deepStrictEqual(yield* RunStage.reload(row.id), row)
      assert.deepStrictEqual(yield* threadOf(row.run.threadId), heldBy(row.id))
    }))

  it.effect("reap of a started run: error, terminal 'run_recovery_reaped', usage receipt (what it metered), finish 'error'; failed with an incident reference, thread released", () =>
    Effect.gen(function*() {
      const started = yield* startedRun
      // Two steps metered before its executor was lost.
      yield* Effect.scoped(Effect.gen(function*() {
        const writer = yield* (yield* EventLog).writer(started.row.id)
        yield* writer.commit([runChange({ usage, progressed: true })])
      }))
      const row = yield* RunStage.reload(started.row.id)
      const seq = started.seq
      const now = yield* later
      yield* (yield* Finalize).reap(row.id)
      const message = "The run could not be resumed and was finalized by the recovery pass."
      assert.deepStrictEqual(yield* chunksAfter(row.id, seq), [
        { type: "error", errorText: message },
        { type: "data-svc-terminal", data: { terminalReason: "run_recovery_reaped" } },
        { type: "data-svc-usage", data: usage },
        { type: "finish", finishReason: "error" }
      ])
      const after = yield* RunStage.reload(row.id)
      const reference = after.run.error?.reference ?? ""
      assert.match(reference, /^inc_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(after.run, {
        ...row.run,
        status: "failed",
        terminalReason: "run_recovery_reaped",
        error: { type: "api_error", code: "internal_error", message, reference },
        completedAt: now
      })
      assert.deepStrictEqual(yield* threadOf(row.run.threadId), released)
    }))

  it.effect("reap of a run that never wrote a chunk: its stream opens with start", () =>
    Effect.gen(function*() {
      const row = yield* RunStage.stageRun()
      yield* later
      yield* (yield* Finalize).reap(row.id)
      assert.deepStrictEqual(yield* chunksAfter(row.id, 0), [
        { type: "start", messageId: row.id },
        { type: "error", errorText: "The run could not be resumed and was finalized by the recovery pass." },
        { type: "data-svc-terminal", data: { terminalReason: "run_recovery_reaped" } },
        { type: "data-svc-usage", data: ZeroUsage },
        { type: "finish", finishReason: "error" }
      ])
      assert.strictEqual((yield* RunStage.reload(row.id)).run.status, "failed")
      assert.deepStrictEqual(yield* threadOf(row.run.threadId), released)
    }))

  it.effect("reap of a run that ended since the recovery pass chose it: nothing written, nothing changed", () =>
    Effect.gen(function*() {
      const { row, seq, ended } = yield* endedRun
      yield* later
      yield* (yield* Finalize).reap(row.id)
      assert.strictEqual((yield* chunksAfter(row.id, seq)).length, 3)
      assert.deepStrictEqual(yield* RunStage.reload(row.id), ended)
    }))
})

/**
 * How a run ends: completed or failed (terminal chunks, usage receipt, status
 * and the thread released in the transaction that stores the last chunks),
 * cancelled (by a person, or a park past its window), or reaped by the
 * recovery pass; every terminal end carries the `data-svc-usage` receipt. A parked turn's stream ends with `finish` 'other' and goes on
 * when the run resumes; a step waiting on its workers keeps the stream open.
 * A root that delegated reports its tree's usage in its receipt; a worker
 * ended by an engine fault is credited (billed $0, spec 7).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { RunId } from "../../domain/Ids.ts"
import {
  ActiveStatuses,
  ParkedStatuses,
  type RunError,
  type RunStatus,
  type UsageTotal,
  ZeroUsage
} from "../../domain/Run.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { InteractionRepo } from "../store/InteractionRepo.ts"
import { RunRepo, type RunRow } from "../store/RunRepo.ts"
import { nowIso } from "../Time.ts"
import { Delegation } from "./Delegation.ts"
import { EventLog, fenced, runChange, type Writer } from "./EventLog.ts"
import type { Outcome } from "./Outcome.ts"

export class Finalize extends Context.Service<Finalize, {
  /** Records the loop's outcome. */
  readonly outcome: (row: RunRow, writer: Writer, outcome: Outcome, usage: UsageTotal) => Effect.Effect<void>
  /** The run's fiber was interrupted by a cancel; `usage` is its metered total as of the last completed step. */
  readonly cancelled: (row: RunRow, writer: Writer, usage: UsageTotal) => Effect.Effect<void>
  /** Finalizes a run that is not executing here as cancelled. */
  readonly cancelIdle: (runId: RunId) => Effect.Effect<void>
  /** A parked run past its max-park window: cancelled with interaction_timeout, interactions cancelled, thread freed. */
  readonly expire: (runId: RunId) => Effect.Effect<void>
  /** Finalizes a run that cannot be resumed: failed, terminalReason run_recovery_reaped. */
  readonly reap: (runId: RunId) => Effect.Effect<void>
}>()("svc/Finalize") {
  static readonly layer = Layer.effect(Finalize)(
    Effect.gen(function*() {
      const repo = yield* RunRepo
      const interactions = yield* InteractionRepo
      const events = yield* EventLog
      const ids = yield* IdGenerator
      const delegation = yield* Delegation

      /** Ends a run that did not complete: status, thread, pending interactions and park, with the last chunks. */
      const stop = (row: RunRow, writer: Writer, terminalReason: string | null) =>
        Effect.flatMap(nowIso, (now) =>
          writer.commit([
            runChange({
              status: "cancelled",
              ...(terminalReason === null ? {} : { terminalReason }),
              completedAt: now,
              clearPark: true
            }),
            repo.statements.releaseThread(row.run.threadId, row.id, now),
            interactions.cancelPendingStatement(row.id, now)
          ]))

      const outcome = Effect.fn("Finalize.outcome")(
        function*(row: RunRow, writer: Writer, outcome: Outcome, metered: UsageTotal) {
          if (outcome._tag === "StillParked") return
          // Waiting on workers: what the step announced is stored; the stream goes on when the run resumes.
          if (outcome._tag === "Delegated") return yield* writer.flush
          if (outcome._tag === "Parked") {
            // The stream of this turn ends here; it goes on in the same log when the run resumes.
            yield* writer.emit({ type: "finish", finishReason: "other" })
            return yield* writer.flush
          }
          const now = yield* nowIso
          const usage = row.plan?.worker !== undefined && outcome.terminalReason === "engine_fault"
            ? { ...metered, costCents: 0 }
            : metered
          if (outcome._tag === "Failed") yield* writer.emit({ type: "error", errorText: outcome.error.message })
          const output = outcome._tag === "Completed" ? outcome.output : undefined
          yield* writer.emit({
            type: "data-svc-terminal",
            data: { terminalReason: outcome.terminalReason, ...(output === undefined ? {} : { output }) }
          })
          yield* writer.emit({ type: "data-svc-usage", data: yield* delegation.reported(row, usage) })
          yield* writer.emit({ type: "finish", finishReason: outcome._tag === "Completed" ? "stop" : "error" })
          yield* writer.commit([
            runChange({
              status: outcome._tag === "Completed" ? "completed" : "failed",
              terminalReason: outcome.terminalReason,
              error: outcome._tag === "Failed" ? outcome.error : null,
              usage,
              completedAt: now
            }),
            repo.statements.releaseThread(row.run.threadId, row.id, now)
          ])
        }
      )

      /** A cancelled run ends with its terminal chunk and usage receipt too (what was billed), then abort. */
      const cancelled = Effect.fn("Finalize.cancelled")(function*(row: RunRow, writer: Writer, usage: UsageTotal) {
        yield* writer.emit({ type: "data-svc-terminal", data: { terminalReason: null } })
        yield* writer.emit({ type: "data-svc-usage", data: yield* delegation.reported(row, usage) })
        yield* writer.emit({ type: "abort", reason: "cancelled" })
        yield* stop(row, writer, null)
      })

      /**
       * A finalization outside an execution claims the run first (an execution still going
       * somewhere is fenced out), and writes only while it holds that claim.
       */
      const claimed = <A>(
        runId: RunId,
        among: ReadonlyArray<RunStatus>,
        end: (row: RunRow, writer: Writer) => Effect.Effect<A>
      ) =>
        Effect.gen(function*() {
          const found = yield* repo.claim(runId, among)
          if (Option.isNone(found)) return
          const writer = yield* events.writer(runId, { attempt: found.value.attempt })
          yield* fenced(writer, end(found.value, writer))
        }).pipe(Effect.scoped)

      const cancelIdle = Effect.fn("Finalize.cancelIdle")(function*(runId: RunId) {
        yield* claimed(runId, ActiveStatuses, (row, writer) =>
          Effect.gen(function*() {
            if (writer.startSeq === 0) yield* writer.emit({ type: "start", messageId: runId })
            yield* cancelled(row, writer, row.run.usage ?? ZeroUsage)
          }))
      })

      const reap = Effect.fn("Finalize.reap")(function*(runId: RunId) {
        // A run that ended since the recovery pass chose it keeps its own end.
        yield* claimed(runId, ActiveStatuses, reapClaimed)
      })

      /**
       * A reaped run ends like any other: its terminal chunk and its usage receipt, what it metered
       * up to its last completed step (its tree's, for a root that delegated), which stays its usage.
       */
      const reapClaimed = Effect.fn("Finalize.reapClaimed")(function*(row: RunRow, writer: Writer) {
        const runId = row.id
        const reference = yield* ids.make("incident")
        const error: RunError = {
          type: "api_error",
          code: "internal_error",
          message: "The run could not be resumed and was finalized by the recovery pass.",
          reference
        }
        yield* Effect.logError("run reaped by the recovery pass").pipe(
          Effect.annotateLogs({ reference, run_id: runId })
        )
        if (writer.startSeq === 0) yield* writer.emit({ type: "start", messageId: runId })
        yield* writer.emit({ type: "error", errorText: error.message })
        yield* writer.emit({ type: "data-svc-terminal", data: { terminalReason: "run_recovery_reaped" } })
        yield* writer.emit({
          type: "data-svc-usage",
          data: yield* delegation.reported(row, row.run.usage ?? ZeroUsage)
        })
        yield* writer.emit({ type: "finish", finishReason: "error" })
        yield* writer.commit(repo.statements.reap(runId, error, yield* nowIso))
      })

      const expire = Effect.fn("Finalize.expire")(function*(runId: RunId) {
        // Only a run still parked: one resumed meanwhile is its execution's.
        yield* claimed(runId, ParkedStatuses, (row, writer) =>
          Effect.gen(function*() {
            yield* writer.emit({ type: "data-svc-terminal", data: { terminalReason: "interaction_timeout" } })
            yield* writer.emit({
              type: "data-svc-usage",
              data: yield* delegation.reported(row, row.run.usage ?? ZeroUsage)
            })
            yield* writer.emit({ type: "abort", reason: "interaction_timeout" })
            yield* stop(row, writer, "interaction_timeout")
          }))
      })

      return { outcome, cancelled, cancelIdle, reap, expire }
    })
  )
}

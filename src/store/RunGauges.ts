/**
 * The deployment's run gauges, read at scrape time in one query: active runs
 * by status (queued, preparing, running, waiting_for_approval,
 * waiting_for_input) and the follow-ups held for them. Cheap at any history
 * size: active runs are counted from the partial index `runs_active` alone
 * (an index-only scan), and held follow-ups from the partial index
 * `run_followups_queued` (migration 0023_scale), not run by run.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schema } from "effect"
import { RunStatus } from "../../domain/Run.ts"

export interface RunGaugeValues {
  /** Active runs by status; a status with no runs is absent. */
  readonly byStatus: ReadonlyMap<RunStatus, number>
  /** Follow-up messages held (queued) for active runs. */
  readonly heldFollowups: number
}

const Rows = Schema.Array(Schema.Struct({ status: RunStatus, runs: Schema.Number, held: Schema.Number }))
const decode = Schema.decodeUnknownEffect(Rows)

export class RunGauges extends Context.Service<RunGauges, {
  readonly read: Effect.Effect<RunGaugeValues>
}>()("svc/RunGauges") {
  static readonly layer = Layer.effect(RunGauges)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      return {
        read: sql`SELECT s.status, s.runs, coalesce(h.held, 0)::int AS held
          FROM (SELECT status, count(*)::int AS runs FROM runs
                WHERE status NOT IN ('completed', 'failed', 'cancelled') GROUP BY status) s
          LEFT JOIN (SELECT r.status, count(*)::int AS held FROM run_followups f JOIN runs r ON r.id = f.run_id
                     WHERE f.status = 'queued' AND r.status NOT IN ('completed', 'failed', 'cancelled') GROUP BY r.status) h
            USING (status)`.pipe(
          Effect.flatMap(decode),
          Effect.map((rows): RunGaugeValues => ({
            byStatus: new Map(rows.map((r) => [r.status, r.runs])),
            heldFollowups: rows.reduce((sum, r) => sum + r.held, 0)
          })),
          Effect.orDie,
          Effect.withSpan("RunGauges.read")
        )
      }
    })
  )
}

/**
 * Held follow-ups (spec 4.2 thread_busy details, 4.3 rule 4): `queued` until
 * the run claims them at a turn boundary (`claimed`) or the caller withdraws
 * them (`withdrawn`); `delivered` once their `data-svc-followup-replayed`
 * chunks are stored (the mark goes in the same write). Until then they are
 * listed on the run, so a held message is always either listed or replayed,
 * never neither. Those left on a terminal run stay listed, read-only.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schema } from "effect"
import type { Statement } from "effect/sql"
import { FollowupId, type RunId } from "../../domain/Ids.ts"
import type { QueuedFollowup } from "../../domain/Run.ts"

const Rows = Schema.Array(Schema.Struct({ id: FollowupId, text: Schema.String, queued_at: Schema.String }))
const decode = Schema.decodeUnknownEffect(Rows)
const toFollowups = (rows: typeof Rows.Type): ReadonlyArray<QueuedFollowup> =>
  rows.map((r) => ({ id: r.id, text: r.text, queuedAt: r.queued_at }))

export class FollowupRepo extends Context.Service<FollowupRepo, {
  /** Holds `text` for the run while it is still active; false when it already ended. */
  readonly hold: (runId: RunId, id: FollowupId, text: string, now: string) => Effect.Effect<boolean>
  readonly queued: (runId: RunId) => Effect.Effect<ReadonlyArray<QueuedFollowup>>
  /** Claims every queued follow-up of the run for delivery, oldest first. */
  /**
   * Claims the run's queued follow-ups for delivery. `reclaim`: also those claimed by an earlier
   * execution that ended before it stored their replay (a crash in between), so none is lost.
   */
  readonly claim: (runId: RunId, now: string, reclaim?: boolean) => Effect.Effect<ReadonlyArray<QueuedFollowup>>
  /** Marks claimed follow-ups delivered, as a statement to run within the write that stores their replay. */
  readonly deliveredStatement: (ids: ReadonlyArray<FollowupId>) => Statement.Fragment
  /** Withdraws a queued follow-up of an active run; false when it is gone or read-only. */
  readonly withdraw: (runId: RunId, id: FollowupId) => Effect.Effect<boolean>
}>()("svc/FollowupRepo") {
  static readonly layer = Layer.effect(FollowupRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      return {
        hold: Effect.fn("FollowupRepo.hold")(function*(runId: RunId, id: FollowupId, text: string, now: string) {
          const rows = yield* sql`INSERT INTO run_followups (id, run_id, text, status, queued_at)
            SELECT ${id}, ${runId}, ${text}, 'queued', ${now}
            WHERE EXISTS (SELECT 1 FROM runs WHERE id = ${runId} AND status NOT IN ('completed', 'failed', 'cancelled'))
            RETURNING id`.pipe(Effect.orDie)
          return rows.length > 0
        }),
        queued: Effect.fn("FollowupRepo.queued")(function*(runId: RunId) {
          return toFollowups(
            yield* sql`SELECT id, text, queued_at FROM run_followups WHERE run_id = ${runId} AND status IN ('queued', 'claimed')
              ORDER BY seq`.pipe(Effect.flatMap(decode), Effect.orDie)
          )
        }),
        claim: Effect.fn("FollowupRepo.claim")(function*(runId: RunId, now: string, reclaim = false) {
          const claimable = reclaim ? sql`status IN ('queued', 'claimed')` : sql`status = 'queued'`
          return toFollowups(
            yield* sql`WITH claimed AS (
                UPDATE run_followups SET status = 'claimed', claimed_at = ${now}
                WHERE run_id = ${runId} AND ${claimable} RETURNING seq, id, text, queued_at
              ) SELECT id, text, queued_at FROM claimed ORDER BY seq`.pipe(Effect.flatMap(decode), Effect.orDie)
          )
        }),
        deliveredStatement: (ids: ReadonlyArray<FollowupId>) =>
          sql`UPDATE run_followups SET status = 'delivered' WHERE ${sql.in("id", ids)} AND status = 'claimed'`,
        withdraw: Effect.fn("FollowupRepo.withdraw")(function*(runId: RunId, id: FollowupId) {
          const rows = yield* sql`UPDATE run_followups SET status = 'withdrawn'
            WHERE id = ${id} AND run_id = ${runId} AND status = 'queued'
              AND EXISTS (SELECT 1 FROM runs WHERE id = ${runId} AND status NOT IN ('completed', 'failed', 'cancelled'))
            RETURNING id`.pipe(Effect.orDie)
          return rows.length > 0
        })
      }
    })
  )
}

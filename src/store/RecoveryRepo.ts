/**
 * What the recovery pass asks of storage: runs whose executing process died,
 * runs silent for too long, parks past their deadline, the count of attempts,
 * retention of the cluster's delivered run messages, and retention of the
 * streams of runs that ended (the run rows stay).
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schema } from "effect"
import { RunId, WorkerId } from "../../domain/Ids.ts"
import { liveNodeIds } from "./NodeRepo.ts"

/** A run to dispatch again, with the generation its Start carries (a worker run through its entity, by reference). */
export interface Dispatch {
  readonly id: RunId
  readonly generation: number
  readonly workerRef: WorkerId | null
  /** The dispatch that follows the run's creation (RunEntity's Start `created`). */
  readonly created?: boolean
}

const decodeDispatches = Schema.decodeUnknownEffect(Schema.Array(
  Schema.Struct({ id: RunId, generation: Schema.Number, worker_ref: Schema.NullOr(WorkerId) })
))
const toDispatches = (rows: unknown) =>
  decodeDispatches(rows).pipe(
    Effect.map((decoded) =>
      decoded.map((r): Dispatch => ({ id: r.id, generation: r.generation, workerRef: r.worker_ref }))
    ),
    Effect.orDie
  )

export class RecoveryRepo extends Context.Service<RecoveryRepo, {
  /** Parked runs whose deadline passed. */
  readonly parkExpired: (now: string) => Effect.Effect<ReadonlyArray<RunId>>
  /**
   * Active (not parked) runs with no heartbeat since `before`, runs still queued (never
   * begun: their dispatch was lost) since `queuedBefore`, and runs running with no executor since
   * `handedBefore` (a resume whose dispatch was lost, an execution handed off by its runner).
   */
  readonly stalled: (
    before: string,
    queuedBefore: string,
    handedBefore: string
  ) => Effect.Effect<ReadonlyArray<Dispatch>>
  /**
   * Active runs whose executor died: it stopped beating for `deadAfterMs`, or (`sessions`, on
   * PostgreSQL) none of its database sessions is left (a killed process's end at once). Not when the
   * pass dispatched them again less than `againAfterMs` ago (that execution has yet to begin).
   */
  readonly orphaned: (
    deadAfterMs: number,
    againAfterMs: number,
    sessions: boolean
  ) => Effect.Effect<ReadonlyArray<Dispatch>>
  /** Counts one more recovery attempt; returns the count. */
  readonly bumpRecovery: (runId: RunId, now: string) => Effect.Effect<number>
  /**
   * Retention of the cluster's message storage, which keeps delivered
   * messages forever: the persisted messages of runs that ended before
   * `cutoff`, and their replies, are deleted.
   */
  readonly purgeDeliveredMessages: (cutoff: string) => Effect.Effect<void>
  /** Retention of the event log: the stored chunks of runs that ended before `cutoff` are deleted; the runs stay. */
  readonly purgeStreams: (cutoff: string) => Effect.Effect<void>
}>()("svc/RecoveryRepo") {
  static readonly layer = Layer.effect(RecoveryRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      return {
        parkExpired: Effect.fn("RecoveryRepo.parkExpired")(function*(now: string) {
          const rows = yield* sql`SELECT id FROM runs WHERE status IN ('waiting_for_approval', 'waiting_for_input')
            AND park_deadline <= ${now} ORDER BY park_deadline LIMIT 100`.pipe(
            Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ id: RunId })))),
            Effect.orDie
          )
          return rows.map((r) => r.id)
        }),
        stalled: Effect.fn("RecoveryRepo.stalled")(
          function*(before: string, queuedBefore: string, handedBefore: string) {
            // A root waiting on workers that are still going is not stalled: its workers are the ones executing.
            return yield* sql`SELECT id, generation, worker_ref FROM runs r WHERE status IN ('queued', 'preparing', 'running')
              AND (updated_at < ${before} OR (status = 'queued' AND updated_at < ${queuedBefore})
                OR (status = 'running' AND executor IS NULL AND updated_at < ${handedBefore}))
              AND NOT EXISTS (SELECT 1 FROM runs w WHERE w.root_run_id = r.id AND w.status NOT IN ('completed', 'failed', 'cancelled'))
            ORDER BY updated_at LIMIT 100`.pipe(Effect.orDie, Effect.flatMap(toDispatches))
          }
        ),
        orphaned: Effect.fn("RecoveryRepo.orphaned")(
          function*(deadAfterMs: number, againAfterMs: number, sessions: boolean) {
            return yield* sql`SELECT id, generation, worker_ref FROM runs WHERE status IN ('queued', 'preparing', 'running')
              AND executor IS NOT NULL AND executor NOT IN (${liveNodeIds(sql, deadAfterMs, sessions)})
              AND (recovered_at IS NULL OR recovered_at < now() - make_interval(secs => ${againAfterMs / 1000}))
            ORDER BY updated_at LIMIT 100`.pipe(Effect.orDie, Effect.flatMap(toDispatches))
          }
        ),
        bumpRecovery: Effect.fn("RecoveryRepo.bumpRecovery")(function*(runId: RunId, now: string) {
          const rows =
            yield* sql`UPDATE runs SET recovery_attempts = recovery_attempts + 1, recovered_at = now(), updated_at = ${now}
            WHERE id = ${runId} RETURNING recovery_attempts`.pipe(
              Effect.flatMap(
                Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ recovery_attempts: Schema.Number })))
              ),
              Effect.orDie
            )
          return rows[0]?.recovery_attempts ?? 0
        }),
        purgeDeliveredMessages: Effect.fn("RecoveryRepo.purgeDeliveredMessages")(function*(cutoff: string) {
          yield* sql`WITH deleted AS (
              DELETE FROM cluster_messages m USING runs r
              WHERE m.processed AND ((m.entity_type = 'Run' AND m.entity_id = r.id) OR (m.entity_type = 'Worker' AND m.entity_id = r.worker_ref))
                AND r.completed_at IS NOT NULL AND r.completed_at < ${cutoff}
              RETURNING m.request_id
            )
            DELETE FROM cluster_replies WHERE request_id IN (SELECT request_id FROM deleted)`.pipe(Effect.orDie)
        }),
        purgeStreams: Effect.fn("RecoveryRepo.purgeStreams")(function*(cutoff: string) {
          yield* sql`DELETE FROM run_events WHERE run_id IN (
              SELECT id FROM runs WHERE status IN ('completed', 'failed', 'cancelled') AND completed_at < ${cutoff}
            )`.pipe(Effect.orDie)
        })
      }
    })
  )
}

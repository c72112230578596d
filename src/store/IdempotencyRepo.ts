/**
 * Idempotency records (spec: Limits): keyed by (organization, workspace, method, path, key),
 * remembering the body hash and the first response for 24 hours.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Data, Effect, Layer, Option, Schema } from "effect"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { NodeId } from "../NodeId.ts"
import { liveNodeIds, NodeDeadAfterMs } from "./NodeRepo.ts"

export const IdempotencyRetentionMs = 24 * 60 * 60 * 1000

export interface IdempotencyScope {
  readonly organizationId: string
  readonly workspaceId: string
  readonly method: string
  readonly path: string
  readonly key: string
}

/** What claiming a key found: it is ours now, or another request holds (Pending) or answered (Completed) it. */
export type Claim = Data.TaggedEnum<{
  Claimed: {}
  Pending: { readonly bodyHash: string }
  Completed: { readonly bodyHash: string; readonly status: number; readonly response: unknown }
}>
export const Claim = Data.taggedEnum<Claim>()

const Row = Schema.Struct({
  body_hash: Schema.String,
  state: Schema.Literals(["pending", "completed"]),
  status: Schema.NullOr(Schema.Number),
  response: Schema.Unknown,
  created_at: Schema.String
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))

export class IdempotencyRepo extends Context.Service<IdempotencyRepo, {
  /**
   * Claims the key, or reports the record already there (expired records are replaced, and so is a
   * pending one whose process died: no heartbeat for 4 s, or no database session left).
   */
  readonly claim: (
    scope: IdempotencyScope,
    bodyHash: string,
    now: string,
    expiredBefore: string
  ) => Effect.Effect<Claim>
  readonly complete: (scope: IdempotencyScope, status: number, response: unknown) => Effect.Effect<void>
  /** Forgets a claim whose request failed unexpectedly, so a retry can run. */
  readonly release: (scope: IdempotencyScope) => Effect.Effect<void>
  readonly purgeExpired: (expiredBefore: string) => Effect.Effect<void>
}>()("svc/IdempotencyRepo") {
  static readonly layer = Layer.effect(IdempotencyRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      // Records name the process that claimed them; one left pending by a process that died is taken over.
      const owner = Option.getOrNull(yield* Effect.serviceOption(NodeId))
      const sessions = Option.exists(yield* Effect.serviceOption(ServiceConfig), (c) => Option.isSome(c.databaseUrl))
      const where = (s: IdempotencyScope) =>
        sql`organization_id = ${s.organizationId} AND workspace_id = ${s.workspaceId} AND method = ${s.method} AND path = ${s.path} AND key = ${s.key}`
      return {
        claim: Effect.fn("IdempotencyRepo.claim")(
          function*(scope: IdempotencyScope, bodyHash: string, now: string, expiredBefore: string) {
            yield* sql`DELETE FROM idempotency_keys WHERE ${where(scope)} AND (created_at < ${expiredBefore}
                OR (state = 'pending' AND claimed_by IS NOT NULL AND claimed_by NOT IN (${
              liveNodeIds(sql, NodeDeadAfterMs, sessions)
            })))`.pipe(
              Effect.orDie
            )
            const inserted =
              yield* sql`INSERT INTO idempotency_keys (organization_id, workspace_id, method, path, key, body_hash, state, created_at, claimed_by)
              VALUES (${scope.organizationId}, ${scope.workspaceId}, ${scope.method}, ${scope.path}, ${scope.key}, ${bodyHash}, 'pending', ${now}, ${owner})
              ON CONFLICT DO NOTHING RETURNING key`.pipe(Effect.orDie)
            if (inserted.length > 0) return Claim.Claimed()
            const rows = yield* sql`SELECT body_hash, state, status, response, created_at FROM idempotency_keys
              WHERE ${where(scope)}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
            return Option.match(Option.fromNullishOr(rows[0]), {
              // Deleted between our insert and select (a concurrent release): treat as in flight.
              onNone: () => Claim.Pending({ bodyHash }),
              onSome: (r) =>
                r.state === "pending" || r.status === null
                  ? Claim.Pending({ bodyHash: r.body_hash })
                  : Claim.Completed({ bodyHash: r.body_hash, status: r.status, response: r.response })
            })
          }
        ),
        complete: Effect.fn("IdempotencyRepo.complete")(
          function*(scope: IdempotencyScope, status: number, response: unknown) {
            // Only this process's claim: one taken over meanwhile (this process was taken for dead) is the taker's.
            yield* sql`UPDATE idempotency_keys SET state = 'completed', status = ${status}, response = ${
              sql.json(response)
            }
            WHERE ${where(scope)} AND claimed_by IS NOT DISTINCT FROM ${owner}`.pipe(Effect.orDie)
          }
        ),
        release: Effect.fn("IdempotencyRepo.release")(function*(scope: IdempotencyScope) {
          yield* sql`DELETE FROM idempotency_keys WHERE ${
            where(scope)
          } AND state = 'pending' AND claimed_by IS NOT DISTINCT FROM ${owner}`.pipe(Effect.orDie)
        }),
        purgeExpired: Effect.fn("IdempotencyRepo.purgeExpired")(function*(expiredBefore: string) {
          yield* sql`DELETE FROM idempotency_keys WHERE created_at < ${expiredBefore}`.pipe(Effect.orDie)
        })
      }
    })
  )
}

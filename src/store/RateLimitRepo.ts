/** The shared state of rate limits and quotas (tables and functions of migration 0010_limits). */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schema } from "effect"

/** A bucket to take one token from: refilled `perMs` tokens a millisecond, up to `burst`. */
export interface BucketTake {
  readonly bucket: string
  readonly perMs: number
  readonly burst: number
}

export interface BucketState {
  readonly bucket: string
  /** Tokens left after this request (not below 0). */
  readonly remaining: number
  /** Whether the request was admitted (every bucket had a token; then each gave one). */
  readonly admitted: boolean
}

const decodeTaken = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  bucket_key: Schema.String,
  remaining: Schema.Number,
  admitted: Schema.Boolean
})))
const decodeSpent = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ spent: Schema.Number })))

export class RateLimitRepo extends Context.Service<RateLimitRepo, {
  /** Refills the buckets to `nowMs` and takes a token from each when all have one: one round trip. */
  readonly take: (buckets: ReadonlyArray<BucketTake>, nowMs: number) => Effect.Effect<ReadonlyArray<BucketState>>
  /** The metered cost (cents) of the organization's runs created at or after `sinceIso`. */
  readonly spentSince: (organizationId: string, sinceIso: string) => Effect.Effect<number>
}>()("svc/RateLimitRepo") {
  static readonly layer = Layer.effect(RateLimitRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      return {
        take: Effect.fn("RateLimitRepo.take")(function*(buckets: ReadonlyArray<BucketTake>, nowMs: number) {
          const rows = yield* sql`SELECT bucket_key, remaining, admitted FROM svc_rate_take(${
            sql.json(buckets)
          }, ${nowMs}::bigint)`.pipe(Effect.flatMap(decodeTaken), Effect.orDie)
          return rows.map((r) => ({ bucket: r.bucket_key, remaining: Math.max(0, r.remaining), admitted: r.admitted }))
        }),
        spentSince: Effect.fn("RateLimitRepo.spentSince")(function*(organizationId: string, sinceIso: string) {
          const rows = yield* sql`SELECT COALESCE(sum((usage->>'costCents')::float8), 0)::float8 AS spent FROM runs
            WHERE organization_id = ${organizationId} AND created_at >= ${sinceIso}`.pipe(
            Effect.flatMap(decodeSpent),
            Effect.orDie
          )
          return rows[0]?.spent ?? 0
        })
      }
    })
  )
}

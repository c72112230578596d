/**
 * The upload slots of the cluster (table `upload_slots`, migration
 * 0030_upload_slots): slot n of a key is held by the process of its row.
 * `take` runs in a short transaction holding the key's advisory lock, so two
 * processes never take the same slot nor more slots than the limit between
 * them; it first frees the slots of processes that are gone (NodeRepo's
 * liveness: no heartbeat for 4 s, or on PostgreSQL no database session left,
 * so a killed process's slots are free at once). A slot of this process is
 * always its own, whether or not it has registered its heartbeat yet.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { NodeId } from "../NodeId.ts"
import { liveNodeIds, NodeDeadAfterMs } from "./NodeRepo.ts"

const decodeSlots = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ slot: Schema.Number })))

export class UploadSlotRepo extends Context.Service<UploadSlotRepo, {
  /** Takes the lowest free slot of the key below `limit`; its number, or undefined when all are held. */
  readonly take: (keyId: string, limit: number) => Effect.Effect<number | undefined>
  /** Frees this process's slot `slot` of the key. */
  readonly release: (keyId: string, slot: number) => Effect.Effect<void>
}>()("svc/UploadSlotRepo") {
  static readonly layer = Layer.effect(UploadSlotRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const node = yield* NodeId
      const sessions = Option.isSome((yield* ServiceConfig).databaseUrl)
      const take = (keyId: string, limit: number) =>
        sql.withTransaction(
          Effect.gen(function*() {
            yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`uploads:${keyId}`}, 0))`
            yield* sql`DELETE FROM upload_slots WHERE key_id = ${keyId} AND node_id <> ${node}
              AND node_id NOT IN (${liveNodeIds(sql, NodeDeadAfterMs, sessions)})`
            const taken = yield* sql`INSERT INTO upload_slots (key_id, slot, node_id)
              SELECT ${keyId}, s, ${node} FROM generate_series(0, ${limit - 1}::integer) AS s
              WHERE s NOT IN (SELECT slot FROM upload_slots WHERE key_id = ${keyId})
              ORDER BY s LIMIT 1
              RETURNING slot`.pipe(Effect.flatMap(decodeSlots))
            return taken[0]?.slot
          })
        ).pipe(Effect.orDie, Effect.withSpan("UploadSlotRepo.take"))
      const release = (keyId: string, slot: number) =>
        sql`DELETE FROM upload_slots WHERE key_id = ${keyId} AND slot = ${slot} AND node_id = ${node}`.pipe(
          Effect.asVoid,
          Effect.orDie,
          Effect.withSpan("UploadSlotRepo.release")
        )
      return { take, release }
    })
  )
}

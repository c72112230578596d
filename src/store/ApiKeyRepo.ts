/** Persistence of API keys: only a key's SHA-256 and its first characters are stored. */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schema } from "effect"
import type { ApiKeyId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"

const Rows = Schema.Array(
  Schema.Struct({ id: Schema.String, organization_id: Schema.String, workspace_id: Schema.String })
)
const decodeRows = Schema.decodeUnknownEffect(Rows)
const CountRow = Schema.Array(Schema.Struct({ n: Schema.Union([Schema.Number, Schema.NumberFromString]) }))

export interface StoredKey {
  readonly id: ApiKeyId
  readonly hash: string
  /** The key's first characters, to recognize it in listings. */
  readonly prefix: string
  readonly organizationId: string
  readonly workspaceId: string
  readonly source: string
  readonly createdAt: string
}

export class ApiKeyRepo extends Context.Service<ApiKeyRepo, {
  /** The principal of an unrevoked key with this hash. */
  readonly principalOf: (hash: string) => Effect.Effect<Principal | undefined>
  /** Stores the key, or moves an existing one with the same hash to this scope and unrevokes it. */
  readonly upsert: (key: StoredKey) => Effect.Effect<void>
  readonly count: Effect.Effect<number>
}>()("svc/ApiKeyRepo") {
  static readonly layer = Layer.effect(ApiKeyRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      return {
        principalOf: Effect.fn("ApiKeyRepo.principalOf")(function*(hash: string) {
          const rows = yield* sql`SELECT id, organization_id, workspace_id FROM api_keys
            WHERE key_hash = ${hash} AND revoked_at IS NULL`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
          const row = rows[0]
          return row === undefined
            ? undefined
            : { keyId: row.id, organizationId: row.organization_id, workspaceId: row.workspace_id }
        }),
        upsert: Effect.fn("ApiKeyRepo.upsert")(function*(k: StoredKey) {
          yield* sql`INSERT INTO api_keys (id, key_hash, key_prefix, organization_id, workspace_id, source, created_at)
            VALUES (${k.id}, ${k.hash}, ${k.prefix}, ${k.organizationId}, ${k.workspaceId}, ${k.source}, ${k.createdAt})
            ON CONFLICT (key_hash) DO UPDATE SET organization_id = EXCLUDED.organization_id,
              workspace_id = EXCLUDED.workspace_id, revoked_at = NULL`.pipe(Effect.orDie)
        }),
        count: sql`SELECT count(*)::int AS n FROM api_keys`.pipe(
          Effect.flatMap(Schema.decodeUnknownEffect(CountRow)),
          Effect.map((rows) => Number(rows[0]?.n ?? 0)),
          Effect.orDie
        )
      }
    })
  )
}

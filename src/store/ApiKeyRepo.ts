/** Persistence of API keys: only a key's SHA-256 and its first characters are stored. */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { ApiKeyRole } from "../../domain/ApiKey.ts"
import { ApiKeyId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { Position } from "./Cursor.ts"

const KeyRow = Schema.Struct({
  id: ApiKeyId,
  name: Schema.String,
  key_prefix: Schema.String,
  organization_id: Schema.String,
  workspace_id: Schema.String,
  role: ApiKeyRole,
  source: Schema.String,
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String),
  revoked_at: Schema.NullOr(Schema.String)
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(KeyRow))
const decodeRevoked = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ revoked: Schema.Boolean })))
const CountRow = Schema.Array(Schema.Struct({ n: Schema.Union([Schema.Number, Schema.NumberFromString]) }))

/** A stored key as listed: everything but its hash. */
export interface KeyRecord {
  readonly id: ApiKeyId
  readonly name: string
  /** The key's first characters, to recognize it in listings. */
  readonly prefix: string
  readonly organizationId: string
  readonly workspaceId: string
  readonly role: ApiKeyRole
  /** `seed` (SVC_API_KEYS), `api`, `dev` (the embedded default's) or `cli` (minted on the storage by earlier versions). */
  readonly source: string
  readonly createdAt: string
  readonly lastUsedAt: string | null
  readonly revokedAt: string | null
}

export interface NewKey {
  readonly id: ApiKeyId
  readonly hash: string
  readonly name: string
  readonly prefix: string
  readonly organizationId: string
  readonly workspaceId: string
  readonly role: ApiKeyRole
  readonly source: string
  readonly createdAt: string
}

const toRecord = (r: typeof KeyRow.Type): KeyRecord => ({
  id: r.id,
  name: r.name,
  prefix: r.key_prefix,
  organizationId: r.organization_id,
  workspaceId: r.workspace_id,
  role: r.role,
  source: r.source,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at
})

const columns =
  "id, name, key_prefix, organization_id, workspace_id, role, source, created_at, last_used_at, revoked_at"

export class ApiKeyRepo extends Context.Service<ApiKeyRepo, {
  /** The principal of an unrevoked key with this hash, marking it used at `now`. */
  readonly use: (hash: string, now: string) => Effect.Effect<Principal | undefined>
  readonly insert: (key: NewKey) => Effect.Effect<void>
  /**
   * Stores a key of SVC_API_KEYS, or moves an existing one with the same hash
   * to this scope and role. A key revoked because it had left SVC_API_KEYS is
   * valid again; one revoked through the API stays revoked (answered `false`).
   */
  readonly upsertSeed: (key: NewKey) => Effect.Effect<boolean>
  /** Revokes the seed keys whose hash is not in `keep` (they left SVC_API_KEYS); answers how many. */
  readonly revokeSeedsExcept: (keep: ReadonlyArray<string>, now: string) => Effect.Effect<number>
  readonly find: (id: ApiKeyId) => Effect.Effect<Option.Option<KeyRecord>>
  /** The organization's keys, newest first, `limit + 1` rows after `after`. */
  readonly list: (organizationId: string, limit: number, after: Position | undefined) => Effect.Effect<
    ReadonlyArray<KeyRecord>
  >
  /** Revokes the key at `now` unless it already is; answers the key as it now is. */
  readonly revoke: (id: ApiKeyId, now: string) => Effect.Effect<Option.Option<KeyRecord>>
  readonly count: Effect.Effect<number>
}>()("svc/ApiKeyRepo") {
  static readonly layer = Layer.effect(ApiKeyRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const select = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeRows), Effect.map((rows) => rows.map(toRecord)), Effect.orDie)
      return {
        use: Effect.fn("ApiKeyRepo.use")(function*(hash: string, now: string) {
          const rows = yield* select(
            sql`UPDATE api_keys SET last_used_at = ${now} WHERE key_hash = ${hash} AND revoked_at IS NULL
              RETURNING ${sql.literal(columns)}`
          )
          const row = rows[0]
          return row === undefined
            ? undefined
            : { keyId: row.id, organizationId: row.organizationId, workspaceId: row.workspaceId, role: row.role }
        }),
        insert: Effect.fn("ApiKeyRepo.insert")(function*(k: NewKey) {
          yield* sql`INSERT INTO api_keys (id, key_hash, key_prefix, name, organization_id, workspace_id, role, source, created_at)
            VALUES (${k.id}, ${k.hash}, ${k.prefix}, ${k.name}, ${k.organizationId}, ${k.workspaceId}, ${k.role},
              ${k.source}, ${k.createdAt})`.pipe(Effect.orDie)
        }),
        upsertSeed: Effect.fn("ApiKeyRepo.upsertSeed")(function*(k: NewKey) {
          const rows = yield* sql`INSERT INTO api_keys
              (id, key_hash, key_prefix, name, organization_id, workspace_id, role, source, created_at)
            VALUES (${k.id}, ${k.hash}, ${k.prefix}, ${k.name}, ${k.organizationId}, ${k.workspaceId}, ${k.role},
              ${k.source}, ${k.createdAt})
            ON CONFLICT (key_hash) DO UPDATE SET organization_id = EXCLUDED.organization_id,
              workspace_id = EXCLUDED.workspace_id, role = EXCLUDED.role, source = EXCLUDED.source,
              revoked_at = CASE WHEN api_keys.revoked_by = 'api' THEN api_keys.revoked_at END,
              revoked_by = CASE WHEN api_keys.revoked_by = 'api' THEN 'api' END
            RETURNING revoked_at IS NOT NULL AS revoked`.pipe(Effect.flatMap(decodeRevoked), Effect.orDie)
          return rows[0]?.revoked !== true
        }),
        revokeSeedsExcept: Effect.fn("ApiKeyRepo.revokeSeedsExcept")(
          function*(keep: ReadonlyArray<string>, now: string) {
            const kept = keep.length === 0 ? sql`` : sql`AND key_hash NOT IN ${sql.in(keep)}`
            const rows = yield* sql`UPDATE api_keys SET revoked_at = ${now}, revoked_by = 'config'
            WHERE source = 'seed' AND revoked_at IS NULL ${kept} RETURNING id`.pipe(Effect.orDie)
            return rows.length
          }
        ),
        find: Effect.fn("ApiKeyRepo.find")(function*(id: ApiKeyId) {
          const rows = yield* select(sql`SELECT ${sql.literal(columns)} FROM api_keys WHERE id = ${id}`)
          return Option.fromNullishOr(rows[0])
        }),
        list: Effect.fn("ApiKeyRepo.list")(function*(
          organizationId: string,
          limit: number,
          after: Position | undefined
        ) {
          return yield* select(
            after === undefined
              ? sql`SELECT ${sql.literal(columns)} FROM api_keys WHERE organization_id = ${organizationId}
                  ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
              : sql`SELECT ${sql.literal(columns)} FROM api_keys WHERE organization_id = ${organizationId}
                  AND (created_at, id) < (${after.createdAt}, ${after.id})
                  ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
          )
        }),
        revoke: Effect.fn("ApiKeyRepo.revoke")(function*(id: ApiKeyId, now: string) {
          const rows = yield* select(
            sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${now}),
                revoked_by = 'api'
              WHERE id = ${id} RETURNING ${sql.literal(columns)}`
          )
          return Option.fromNullishOr(rows[0])
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

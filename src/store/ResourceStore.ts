/**
 * Persistence shared by secrets, secret contexts and the four adapter kinds
 * (one table shape, migration 0002_adapters). Each service decodes `config`
 * with its own schema.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Data, Effect, Layer, Option, Schema } from "effect"
import type { SqlError } from "effect/sql"
import { Metadata } from "../../domain/Metadata.ts"
import type { Position } from "./Cursor.ts"
import type { adapterTables } from "./migrations/0002_adapters.ts"
import type { Sealed } from "./Sealed.ts"

/** The adapter-shaped tables: those of 0002_adapters, and code-hosting connections (0019_codehost). */
export type AdapterTable = (typeof adapterTables)[number] | "codehost_connections" | "environments"

/**
 * A stored row. The store reads every table's ids as plain strings; AdapterCrud
 * decodes them to their kind's brand (`Id`) when it loads a row.
 */
export interface ResourceRow<Id extends string = string> extends Position {
  readonly id: Id
  readonly organizationId: string
  readonly workspaceId: string
  readonly name: string
  readonly config: unknown
  readonly metadata: Metadata
  readonly configVersion: number
  readonly sealed: Sealed | null
  readonly updatedAt: string
}

const Row = Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  workspace_id: Schema.String,
  name: Schema.String,
  config: Schema.Unknown,
  metadata: Metadata,
  config_version: Schema.Number,
  sealed: Schema.NullOr(Schema.String),
  key_id: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))

const toRow = (r: typeof Row.Type): ResourceRow => ({
  id: r.id,
  organizationId: r.organization_id,
  workspaceId: r.workspace_id,
  name: r.name,
  config: r.config,
  metadata: r.metadata,
  configVersion: r.config_version,
  sealed: r.sealed === null || r.key_id === null ? null : { ciphertext: r.sealed, keyId: r.key_id },
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

export interface ListFilter {
  readonly name?: string | undefined
  /** Exact key/value containment over the flat metadata. */
  readonly metadata?: Readonly<Record<string, string>> | undefined
}

/** A reference found by a JSON containment probe: which row of which table points at an id. */
export interface Referrer {
  readonly table: AdapterTable | "agents"
  readonly id: string
}

/** The organization already has a row of this kind with this name (unique index). */
export class NameTaken extends Data.TaggedError("NameTaken")<{}> {}

const nameTaken = <A, R>(effect: Effect.Effect<A, SqlError.SqlError, R>): Effect.Effect<A, NameTaken, R> =>
  Effect.catch(effect, (e) => (e.reason._tag === "UniqueViolation" ? Effect.fail(new NameTaken()) : Effect.die(e)))

export interface ResourceStoreShape {
  readonly insert: (table: AdapterTable, row: ResourceRow) => Effect.Effect<void, NameTaken>
  readonly find: (table: AdapterTable, id: string) => Effect.Effect<Option.Option<ResourceRow>>
  readonly findByName: (
    table: AdapterTable,
    organizationId: string,
    name: string
  ) => Effect.Effect<Option.Option<ResourceRow>>
  readonly list: (
    table: AdapterTable,
    scope: { readonly organizationId: string; readonly workspaceId: string },
    limit: number,
    after: Position | undefined,
    filter?: ListFilter
  ) => Effect.Effect<ReadonlyArray<ResourceRow>>
  readonly update: (table: AdapterTable, row: ResourceRow) => Effect.Effect<void, NameTaken>
  readonly remove: (table: AdapterTable, id: string) => Effect.Effect<void>
  /** Rows of `table` whose `column` JSON contains `probe` (jsonb @>), in the same workspace. */
  readonly referrers: (
    table: AdapterTable | "agents",
    column: "config",
    probe: unknown,
    scope: { readonly organizationId: string; readonly workspaceId: string }
  ) => Effect.Effect<ReadonlyArray<string>>
}

export class ResourceStore extends Context.Service<ResourceStore, ResourceStoreShape>()("svc/ResourceStore") {
  static readonly layer = Layer.effect(ResourceStore)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const select = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeRows), Effect.map((rows) => rows.map(toRow)), Effect.orDie)
      const t = (table: string) => sql(table)
      return {
        insert: Effect.fn("ResourceStore.insert")(function*(table: AdapterTable, r: ResourceRow) {
          yield* sql`INSERT INTO ${t(table)} (id, organization_id, workspace_id, name, config, metadata, config_version,
              sealed, key_id, created_at, updated_at)
            VALUES (${r.id}, ${r.organizationId}, ${r.workspaceId}, ${r.name}, ${sql.json(r.config)}, ${
            sql.json(r.metadata)
          },
              ${r.configVersion}, ${r.sealed?.ciphertext ?? null}, ${
            r.sealed?.keyId ?? null
          }, ${r.createdAt}, ${r.updatedAt})`
            .pipe(nameTaken)
        }),
        find: Effect.fn("ResourceStore.find")(function*(table: AdapterTable, id: string) {
          const rows = yield* select(sql`SELECT * FROM ${t(table)} WHERE id = ${id}`)
          return Option.fromNullishOr(rows[0])
        }),
        findByName: Effect.fn("ResourceStore.findByName")(
          function*(table: AdapterTable, organizationId: string, name: string) {
            const rows = yield* select(
              sql`SELECT * FROM ${t(table)} WHERE organization_id = ${organizationId} AND name = ${name}`
            )
            return Option.fromNullishOr(rows[0])
          }
        ),
        list: Effect.fn("ResourceStore.list")(function*(
          table: AdapterTable,
          scope: { readonly organizationId: string; readonly workspaceId: string },
          limit: number,
          after: Position | undefined,
          filter: ListFilter = {}
        ) {
          const conditions = [
            sql`organization_id = ${scope.organizationId}`,
            sql`workspace_id = ${scope.workspaceId}`,
            ...(after === undefined ? [] : [sql`(created_at, id) < (${after.createdAt}, ${after.id})`]),
            ...(filter.name === undefined ? [] : [sql`name = ${filter.name}`]),
            ...(filter.metadata === undefined ? [] : [sql`metadata @> ${sql.json(filter.metadata)}`])
          ]
          return yield* select(
            sql`SELECT * FROM ${t(table)} WHERE ${sql.and(conditions)} ORDER BY created_at DESC, id DESC LIMIT ${
              limit + 1
            }`
          )
        }),
        update: Effect.fn("ResourceStore.update")(function*(table: AdapterTable, r: ResourceRow) {
          yield* sql`UPDATE ${t(table)} SET name = ${r.name}, config = ${sql.json(r.config)}, metadata = ${
            sql.json(r.metadata)
          },
              config_version = ${r.configVersion}, sealed = ${r.sealed?.ciphertext ?? null}, key_id = ${
            r.sealed?.keyId ?? null
          },
              updated_at = ${r.updatedAt}
            WHERE id = ${r.id}`.pipe(nameTaken)
        }),
        remove: Effect.fn("ResourceStore.remove")(function*(table: AdapterTable, id: string) {
          yield* sql`DELETE FROM ${t(table)} WHERE id = ${id}`.pipe(Effect.orDie)
        }),
        referrers: Effect.fn("ResourceStore.referrers")(function*(
          table: AdapterTable | "agents",
          column: "config",
          probe: unknown,
          scope: { readonly organizationId: string; readonly workspaceId: string }
        ) {
          const rows = yield* sql`SELECT id FROM ${t(table)} WHERE organization_id = ${scope.organizationId}
              AND workspace_id = ${scope.workspaceId} AND ${sql(column)} @> ${sql.json(probe)}
            ORDER BY id`.pipe(
            Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ id: Schema.String })))),
            Effect.orDie
          )
          return rows.map((r) => r.id)
        })
      }
    })
  )
}

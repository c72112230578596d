/**
 * The migrations' manifest. The migrator records each migration it applies as
 * (id, name) and runs only the ids above the latest recorded, so the manifest
 * must keep the ids and names that databases already migrated hold: a renamed
 * entry would be recorded twice over, a renumbered one run again or never.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Schema } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import * as Database from "../../../src/store/Database.ts"
import * as Migrations from "../../../src/store/Migrations.ts"
import { testDatabase } from "../../support/TestDatabase.ts"

/** What the migrator recorded, release by release: never edited, only extended. */
const released: ReadonlyArray<readonly [number, string]> = [
  [1, "foundation"],
  [2, "adapters"],
  [3, "runs"],
  [4, "followups"],
  [5, "recovery"],
  [6, "interactions"],
  [7, "event_notify"],
  [8, "executors"],
  [10, "limits"],
  [11, "interact"],
  [13, "context_prefix"],
  [14, "workspace_spec"],
  [15, "workspace_snapshots"],
  [16, "artifacts"],
  [17, "result_deliveries"],
  [18, "workers"],
  [19, "codehost"],
  [20, "fencing"],
  [23, "scale"],
  [24, "idempotency_owner"],
  [25, "runner_address"],
  [26, "api_key_roles"],
  [27, "organization_ids"],
  [28, "sealed_snapshots"],
  [29, "blob_chunks"],
  [30, "upload_slots"],
  [31, "environments"],
  [33, "runner_repoll"],
  [34, "browser_profiles"]
]

const Recorded = Schema.Array(Schema.Struct({ migration_id: Schema.Number, name: Schema.String }))

const recordedRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* Effect.flatMap(
    sql`SELECT migration_id, name FROM svc_migrations ORDER BY migration_id`,
    Schema.decodeUnknownEffect(Recorded)
  )
  return rows.map((row) => [row.migration_id, row.name] as const)
})

/** The first `count` migrations of the manifest, applied as a database of an earlier release had them. */
const applyFirst = (count: number) =>
  Migrator.make({})({
    loader: Effect.succeed(
      Migrations.manifest.slice(0, count).map(([id, name, migration]) => [id, name, Effect.succeed(migration)] as const)
    ),
    table: "svc_migrations"
  })

describe("migrations", () => {
  it("the manifest keeps every id and name the migrator recorded, in order", () => {
    assert.deepStrictEqual(Migrations.manifest.map(([id, name]) => [id, name] as const), released)
  })

  it.effect("a fresh database applies every migration once; a second start applies none", () =>
    Effect.gen(function*() {
      const db = yield* testDatabase
      yield* Effect.gen(function*() {
        assert.deepStrictEqual(yield* Migrations.run, released)
        assert.deepStrictEqual(yield* recordedRows, released)
        assert.deepStrictEqual(yield* Migrations.run, [])
        assert.deepStrictEqual(yield* recordedRows, released)
      }).pipe(Effect.provide(Database.layerUrl(Redacted.make(db.url))))
    }).pipe(Effect.scoped), 60_000)

  it.effect("a database that recorded the first migrations applies only the later ones", () =>
    Effect.gen(function*() {
      const db = yield* testDatabase
      yield* Effect.gen(function*() {
        assert.deepStrictEqual(yield* applyFirst(16), released.slice(0, 16))
        assert.deepStrictEqual(yield* Migrations.run, released.slice(16))
        assert.deepStrictEqual(yield* recordedRows, released)
        // The later migrations built on the earlier tables: the run tree's columns (0018) and fencing (0020).
        const sql = yield* SqlClient.SqlClient
        const columns = yield* sql`SELECT column_name FROM information_schema.columns
          WHERE table_name = 'runs' AND column_name IN ('root_run_id', 'attempt') ORDER BY column_name`
        assert.deepStrictEqual(columns, [{ column_name: "attempt" }, { column_name: "root_run_id" }])
      }).pipe(Effect.provide(Database.layerUrl(Redacted.make(db.url))))
    }).pipe(Effect.scoped), 60_000)
  it.effect(
    "keys and organization ids stored by an earlier release: names and roles given, org ids made org_",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        yield* Effect.gen(function*() {
          const before = Migrations.manifest.findIndex(([id]) => id === 26)
          yield* applyFirst(before)
          const sql = yield* SqlClient.SqlClient
          const at = "2026-01-01T00:00:00.000Z"
          const key = (id: string, org: string, source: string, revokedAt: string | null) =>
            sql`INSERT INTO api_keys (id, key_hash, key_prefix, organization_id, workspace_id, source, created_at, revoked_at)
            VALUES (${id}, ${`hash_${id}`}, 'sk_', ${org}, 'prod', ${source}, ${at}, ${revokedAt})`
          yield* key("key_seed", "acme", "seed", null)
          yield* key("key_dev", "org_default", "dev", null)
          yield* key("key_cli", "org_acme2", "cli", at)
          yield* sql`INSERT INTO agents (id, organization_id, workspace_id, config, metadata, config_version, created_at, updated_at)
          VALUES ('agent_a', 'acme', 'prod', '{}', '{}', 1, ${at}, ${at}), ('agent_b', 'org_b', 'prod', '{}', '{}', 1, ${at}, ${at})`
          yield* Migrations.run
          const keys = yield* sql`SELECT id, organization_id, name, role, revoked_by FROM api_keys ORDER BY id`
          assert.deepStrictEqual(keys, [
            {
              id: "key_cli",
              organization_id: "org_acme2",
              name: "minted by the CLI",
              role: "member",
              revoked_by: "api"
            },
            { id: "key_dev", organization_id: "org_default", name: "development key", role: "admin", revoked_by: null },
            { id: "key_seed", organization_id: "org_acme", name: "SVC_API_KEYS", role: "member", revoked_by: null }
          ])
          const agents = yield* sql`SELECT id, organization_id FROM agents ORDER BY id`
          assert.deepStrictEqual(agents, [
            { id: "agent_a", organization_id: "org_acme" },
            { id: "agent_b", organization_id: "org_b" }
          ])
        }).pipe(Effect.provide(Database.layerUrl(Redacted.make(db.url))))
      }).pipe(Effect.scoped),
    60_000
  )
})

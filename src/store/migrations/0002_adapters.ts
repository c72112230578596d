/**
 * Migration 0002_adapters: the tables of secrets, secret contexts, tool
 * approval hooks, result handlers, tool servers and HTTP connections.
 * Adapters and secrets share one shape: scalar columns for what is queried
 * (ownership, name, order), the resource-specific fields in `config`, and an
 * optional sealed secret (AES-256-GCM ciphertext and the id of its key).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** The tables this migration creates, all of one shape (code-hosting connections came later, in 0019_codehost). */
export const adapterTables = [
  "secrets",
  "secret_contexts",
  "tool_approval_hooks",
  "result_handlers",
  "tool_servers",
  "http_connections"
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const table of adapterTables) {
    yield* sql.unsafe(`CREATE TABLE ${table} (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      workspace_id text NOT NULL,
      name text NOT NULL,
      config jsonb NOT NULL,
      metadata jsonb NOT NULL,
      config_version integer NOT NULL,
      sealed text,
      key_id text,
      created_at text NOT NULL,
      updated_at text NOT NULL
    )`)
    yield* sql.unsafe(
      `CREATE INDEX ${table}_workspace_order ON ${table} (organization_id, workspace_id, created_at DESC, id DESC)`
    )
    yield* sql.unsafe(`CREATE INDEX ${table}_org_name ON ${table} (organization_id, name)`)
  }
  // Names unique per organization (spec: Names; secrets 4.9).
  for (const table of ["secrets", "secret_contexts", "tool_servers", "http_connections"]) {
    yield* sql.unsafe(`CREATE UNIQUE INDEX ${table}_org_name_unique ON ${table} (organization_id, name)`)
  }
})

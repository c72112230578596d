/**
 * Migration 0034_browser_profiles: authenticated browser profiles (issue 30).
 * One row per workspace (of its organization) and profile key, scoped as
 * secrets are; the storage state sealed with the master key (SealedState,
 * bound to the row's owner) in `data`, the key's id in `key_id`. `id` is only
 * the page cursor's tie-break.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE browser_profiles (
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    profile_key text NOT NULL,
    id text NOT NULL UNIQUE,
    key_id text NOT NULL,
    data bytea NOT NULL,
    created_at text NOT NULL,
    updated_at text NOT NULL,
    PRIMARY KEY (organization_id, workspace_id, profile_key)
  )`
  yield* sql`CREATE INDEX browser_profiles_workspace_order
    ON browser_profiles (organization_id, workspace_id, created_at DESC, id DESC)`
})

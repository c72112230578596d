/**
 * Migration 0026_api_key_roles: keys are managed through the API. Each key
 * has a `name` (keys stored before get one after where they came from), a
 * `role` (`member`, or `admin` of its organization: the development key of an
 * embedded install is one), the time a request last used it
 * (`last_used_at`) and who revoked it (`revoked_by`: `api`, or `config` for a
 * seed key no longer in SVC_API_KEYS, which a later start may seed again). An
 * index serves the organization's list, newest first.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT ''`
  yield* sql`ALTER TABLE api_keys ADD COLUMN role text NOT NULL DEFAULT 'member'`
  yield* sql`ALTER TABLE api_keys ADD COLUMN last_used_at text`
  yield* sql`ALTER TABLE api_keys ADD COLUMN revoked_by text`
  yield* sql`UPDATE api_keys SET name = CASE source
    WHEN 'seed' THEN 'SVC_API_KEYS' WHEN 'dev' THEN 'development key' ELSE 'minted by the CLI' END`
  yield* sql`UPDATE api_keys SET role = 'admin' WHERE source = 'dev'`
  yield* sql`UPDATE api_keys SET revoked_by = 'api' WHERE revoked_at IS NOT NULL`
  yield* sql`CREATE INDEX api_keys_org_order ON api_keys (organization_id, created_at DESC, id DESC)`
})

/**
 * Migration 0013_context_prefix: forceRefresh is a moment, not a flag: a run
 * rebuilds the thread's cached context prefix when a refresh was asked for
 * after its previous turn began.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE threads ADD COLUMN context_refresh_at text`
  yield* sql`ALTER TABLE threads DROP COLUMN context_refresh`
})

/**
 * Migration 0028_sealed_snapshots: workspace snapshots are stored sealed with
 * the master key (src/secrets/SealedState.ts), and each row records the id of
 * the key that sealed it. A row written before (key_id NULL) holds the plain
 * archive: it is still read as such, and sealed on its thread's next run.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE workspace_snapshots ADD COLUMN key_id text`
})

/**
 * Migration 0004_followups: plain-text messages held while a run is active,
 * delivered at its next turn boundary.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE run_followups (
    seq bigserial,
    id text PRIMARY KEY,
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    text text NOT NULL,
    status text NOT NULL,
    queued_at text NOT NULL,
    claimed_at text
  )`
  yield* sql`CREATE INDEX run_followups_run ON run_followups (run_id, seq)`
})

/**
 * Migration 0011_interact: interactions the run's end cancelled (run
 * cancelled, interaction_timeout), as opposed to those a client settled: a
 * late answer still records on the former (spec 3.2 "pending or any"), the 409
 * rule guards only the latter. Follow-ups get a `delivered` status, set with
 * their replay.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE interactions ADD COLUMN closed_by_run boolean NOT NULL DEFAULT false`
  // Follow-ups claimed before delivery was recorded were delivered with their claim.
  yield* sql`UPDATE run_followups SET status = 'delivered' WHERE status = 'claimed'`
})

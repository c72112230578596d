/**
 * Migration 0005_recovery: recovery bookkeeping, how often the recovery pass
 * re-dispatched a stalled run.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE runs ADD COLUMN recovery_attempts integer NOT NULL DEFAULT 0`
})

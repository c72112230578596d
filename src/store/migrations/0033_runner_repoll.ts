/**
 * Migration 0033_runner_repoll: a runner handed a call must poll again at
 * once (it always does); `repoll_by` is when that next poll is due. A runner
 * past it is gone (killed between two polls, when no open poll's closed
 * connection could tell), well before its heartbeat goes stale (EnvironmentRepo).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE environment_runners ADD COLUMN repoll_by timestamptz`
})

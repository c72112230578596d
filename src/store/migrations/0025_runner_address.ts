/**
 * Migration 0025_runner_address: a process that is a cluster runner records
 * the address it serves the cluster on (`svc_nodes.runner_address`, as the
 * cluster's runner table spells it: `host:port`). With it, any process can tell
 * that a registered runner belongs to a process whose database sessions are
 * gone (killed) and take it out of the cluster at once (src/cluster/DeadRunners.ts),
 * instead of waiting for its runner heartbeat to age.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE svc_nodes ADD COLUMN runner_address text`
})

/**
 * Migration 0008_executors: which process executes a run (`executor`), and
 * which processes are alive (`svc_nodes`, a heartbeat each): a run whose
 * executor stopped beating is dispatched again by the recovery pass, so a
 * dispatch needs no durable message of its own.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE runs ADD COLUMN executor text`
  yield* sql`CREATE TABLE svc_nodes (id text PRIMARY KEY, started_at timestamptz NOT NULL, heartbeat_at timestamptz NOT NULL)`
})

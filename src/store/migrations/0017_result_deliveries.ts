/**
 * Migration 0017_result_deliveries: the journal of result handler answers
 * (spec 6.1). A dispatch whose handler answered 2xx with a valid body is kept
 * under its Svc-Request-Id, so a re-executed step (a run resumed after a
 * crash) replays the answer instead of calling the handler again. Rows go
 * with their run.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE result_deliveries (
    request_id text PRIMARY KEY,
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    result_handler_id text NOT NULL,
    purpose text NOT NULL,
    answer jsonb NOT NULL,
    created_at text NOT NULL
  )`
  yield* sql`CREATE INDEX result_deliveries_run ON result_deliveries (run_id)`
})

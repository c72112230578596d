/**
 * Migration 0014_workspace_spec: a thread's managed workspace runs on the spec
 * its agent had when the thread was created (spec 2.1.3 rule 4, 4.1 rule 6):
 * pinned on the thread.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE threads ADD COLUMN workspace_spec jsonb`
  yield* sql`UPDATE threads t SET workspace_spec = a.config->'workspace' FROM agents a
    WHERE a.id = t.agent_id AND t.workspace IS NOT NULL AND a.config->'workspace'->>'type' = 'managed'`
})

/**
 * Migration 0018_workers (subagents): a worker run is a row of `runs` (its
 * own status, checkpoints, stream, park and executor) scoped under its root:
 * `root_run_id` and `worker_ref` (the `wkr_` reference its entity is
 * addressed by). Worker runs hold no capacity of their own: the active-run cap
 * counts root runs only. Interactions are found by tree (`root_run_id`).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE runs ADD COLUMN root_run_id text`
  yield* sql`ALTER TABLE runs ADD COLUMN worker_ref text`
  yield* sql`CREATE UNIQUE INDEX runs_worker_ref ON runs (worker_ref) WHERE worker_ref IS NOT NULL`
  yield* sql`CREATE INDEX runs_root ON runs (root_run_id, created_at) WHERE root_run_id IS NOT NULL`
  yield* sql`CREATE INDEX interactions_root ON interactions (root_run_id, status)`
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION svc_workspace_slot(org text, ws text, cap integer) RETURNS boolean
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('svc_workspace_runs/' || org || '/' || ws, 0));
      RETURN (SELECT count(*) FROM runs r WHERE r.organization_id = org AND r.workspace_id = ws
        AND r.status IN ('queued', 'preparing', 'running') AND r.root_run_id IS NULL) < cap;
    END $$`)
})

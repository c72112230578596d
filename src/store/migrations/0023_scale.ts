/**
 * Migration 0023_scale: what keeps an idle node's background work and its
 * gauges independent of how many runs are parked and how many threads exist
 * (measured by bench/scale with 100,000 runs parked on 100,000 threads).
 *
 * - `runs_park_deadline`: the recovery pass asks every 2 s for parked runs
 *   past their max-park deadline. Through `runs_active` it read every parked
 *   run (and at 100,000 the planner scanned the whole table instead: 220 ms a
 *   pass); now it reads the expired ones only.
 * - `threads_workspace_idle`: the same pass hibernates idle managed
 *   workspaces and archives unused ones, two scans of every thread (41 ms each
 *   at 100,000 threads, most without a workspace); now only idle threads whose
 *   workspace is not archived are read.
 * - `run_followups_queued`: the `/metrics` gauges counted held follow-ups with
 *   a subquery per active run (575 ms a scrape at 100,000 parked); they are
 *   now counted from the held ones alone.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX runs_park_deadline ON runs (park_deadline) WHERE status IN ('waiting_for_approval', 'waiting_for_input')`
  yield* sql`CREATE INDEX threads_workspace_idle ON threads ((workspace->>'status'))
    WHERE workspace_used_at IS NOT NULL AND active_run_id IS NULL AND workspace->>'status' <> 'archived'`
  yield* sql`CREATE INDEX run_followups_queued ON run_followups (run_id) WHERE status = 'queued'`
})

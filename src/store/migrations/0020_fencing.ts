/**
 * Migration 0020_fencing: one execution of a run at a time, enforced by the
 * database. `runs.attempt` counts the executions that claimed the run (and
 * the finalizations outside one: cancel, expiry, reap); each claim bumps it.
 * `svc_fence(run, attempt)` locks the run's row and raises `svc_run_fenced`
 * unless the caller still holds the latest claim: a stream write calls it in
 * its own statement, so a write of an execution that lost its claim (its node
 * was taken for dead, its shard moved) changes nothing at all, and the row
 * lock orders it before or after a claim, never across one. `recovered_at`:
 * when the recovery pass last dispatched the run again (the database's
 * clock), so that it gives that dispatch time to start before another.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const fencedMark = "svc_run_fenced"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE runs ADD COLUMN attempt integer NOT NULL DEFAULT 0`
  yield* sql`ALTER TABLE runs ADD COLUMN recovered_at timestamptz`
  yield* sql.unsafe(`CREATE FUNCTION svc_fence(p_run text, p_attempt integer) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM runs WHERE id = p_run AND attempt = p_attempt FOR NO KEY UPDATE;
      IF NOT FOUND THEN
        RAISE EXCEPTION '${fencedMark}: run % is held by a later claim than %', p_run, p_attempt;
      END IF;
      RETURN true;
    END $$`)
})

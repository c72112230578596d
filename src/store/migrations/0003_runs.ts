/**
 * Migration 0003_runs: runs, their streams and their checkpoints. The row
 * carries status and totals; `plan` freezes what the run captured at start
 * (agent config, contexts, capability snapshot, options). `run_events` is the
 * durable stream (one row per chunk, ordered by seq); `run_steps` checkpoints
 * each completed step (model response and tool results) so a resumed run
 * never repeats one.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE runs (
    id text PRIMARY KEY,
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    thread_id text NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    agent_id text NOT NULL,
    status text NOT NULL,
    terminal_reason text,
    error jsonb,
    usage jsonb NOT NULL,
    config jsonb NOT NULL,
    plan jsonb NOT NULL,
    metadata jsonb NOT NULL,
    idempotency_key text,
    created_at text NOT NULL,
    started_at text,
    completed_at text,
    updated_at text NOT NULL
  )`
  yield* sql`CREATE INDEX runs_workspace_order ON runs (organization_id, workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX runs_thread_order ON runs (thread_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX runs_active ON runs (status) WHERE status NOT IN ('completed', 'failed', 'cancelled')`
  yield* sql`ALTER TABLE threads ADD COLUMN active_run_id text`
  yield* sql`CREATE TABLE run_events (
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq integer NOT NULL,
    chunk json NOT NULL,
    PRIMARY KEY (run_id, seq)
  )`
  yield* sql`CREATE TABLE run_steps (
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step integer NOT NULL,
    messages jsonb NOT NULL,
    usage jsonb NOT NULL,
    created_at text NOT NULL,
    PRIMARY KEY (run_id, step)
  )`
})

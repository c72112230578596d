/**
 * Migration 0006_interactions: human in the loop. Interactions; the parked
 * step of a run (`park`: what a resumed run needs to finish that step), its
 * deadline, and a generation counter so each resume is a distinct persisted
 * Start; remembered 'once' approvals per thread.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE interactions (
    id text PRIMARY KEY,
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    root_run_id text NOT NULL,
    worker_ref text,
    thread_id text NOT NULL,
    agent_id text NOT NULL,
    kind text NOT NULL,
    status text NOT NULL,
    step_number integer NOT NULL,
    tool_name text NOT NULL,
    tool_call_id text NOT NULL,
    hook_id text,
    input jsonb,
    preview jsonb,
    decision text,
    reason text,
    request jsonb,
    resolution jsonb,
    expires_at text,
    created_at text NOT NULL,
    resolved_at text,
    updated_at text NOT NULL
  )`
  yield* sql`CREATE INDEX interactions_workspace_order ON interactions (organization_id, workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX interactions_run ON interactions (run_id, status)`
  yield* sql`ALTER TABLE runs ADD COLUMN generation integer NOT NULL DEFAULT 0`
  yield* sql`ALTER TABLE runs ADD COLUMN park jsonb`
  yield* sql`ALTER TABLE runs ADD COLUMN park_deadline text`
  yield* sql`CREATE TABLE approval_memory (
    thread_id text NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    tool_name text NOT NULL,
    input_hash text NOT NULL,
    created_at text NOT NULL,
    PRIMARY KEY (thread_id, tool_name, input_hash)
  )`
})

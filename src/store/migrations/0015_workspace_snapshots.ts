/**
 * Migration 0015_workspace_snapshots, for managed workspaces beyond their
 * pinned spec (0014_workspace_spec): the durable snapshot of each thread's
 * workspace files (the copy that follows the thread's runs to another node),
 * and the time a workspace was last used (what its idle and retention
 * lifecycle counts from).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE workspace_snapshots (
    thread_id text PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
    version bigint NOT NULL,
    node text NOT NULL,
    bytes bigint NOT NULL,
    sha256 text NOT NULL,
    data bytea NOT NULL,
    created_at text NOT NULL
  )`
  yield* sql`ALTER TABLE threads ADD COLUMN workspace_used_at text`
})

/**
 * Migration 0016_artifacts: files (uploaded by clients, kept until deleted),
 * artifacts (stored by runs, kept until `expires_at`), and the PostgreSQL
 * artifact store's objects (`artifact_blobs`, used when
 * SVC_ARTIFACT_STORE=postgres). Sizes are bigint, as an S3 store may hold
 * more than 2 GiB in principle.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE artifact_blobs (
    key text PRIMARY KEY,
    content_type text NOT NULL,
    bytes bigint NOT NULL,
    data bytea NOT NULL
  )`
  yield* sql`CREATE TABLE files (
    id text PRIMARY KEY,
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    filename text NOT NULL,
    media_type text NOT NULL,
    bytes bigint NOT NULL,
    sha256 text NOT NULL,
    created_at text NOT NULL
  )`
  yield* sql`CREATE INDEX files_workspace_order ON files (organization_id, workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE artifacts (
    id text PRIMARY KEY,
    organization_id text NOT NULL,
    workspace_id text NOT NULL,
    run_id text,
    thread_id text,
    kind text NOT NULL,
    filename text NOT NULL,
    media_type text NOT NULL,
    bytes bigint NOT NULL,
    sha256 text NOT NULL,
    created_at text NOT NULL,
    expires_at text NOT NULL
  )`
  yield* sql`CREATE INDEX artifacts_expiry ON artifacts (expires_at)`
  yield* sql`CREATE INDEX artifacts_thread ON artifacts (thread_id)`
})

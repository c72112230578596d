/**
 * Migration 0029_blob_chunks: the PostgreSQL artifact store keeps an object's
 * bytes in chunks (`artifact_blob_chunks`, one row per chunk, each written by
 * a statement of its own), so that an upload never carries its whole body in
 * one statement. `artifact_blobs` becomes the object's header: `chunks` counts
 * its chunks once it is finished; `pending_since` is set while a writer is
 * still filling it (not readable; swept if its writer died); `data` stays for
 * the objects written whole before this migration, still read as they are.
 * Workspace storage (SVC_WORKSPACE_STORAGE_QUOTA_BYTES) sums a workspace's
 * files and artifacts: the index serves the artifacts' half.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE artifact_blob_chunks (
    key text NOT NULL,
    seq integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (key, seq)
  )`
  yield* sql`ALTER TABLE artifact_blobs ALTER COLUMN data DROP NOT NULL`
  yield* sql`ALTER TABLE artifact_blobs ADD COLUMN chunks integer`
  yield* sql`ALTER TABLE artifact_blobs ADD COLUMN pending_since bigint`
  yield* sql`CREATE INDEX artifact_blobs_pending ON artifact_blobs (pending_since) WHERE pending_since IS NOT NULL`
  yield* sql`CREATE INDEX artifacts_workspace ON artifacts (organization_id, workspace_id)`
})

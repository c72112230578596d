/**
 * Migration 0030_upload_slots: the uploads each API key has in flight, across
 * the cluster (SVC_MAX_CONCURRENT_UPLOADS_PER_KEY). One row per slot held:
 * the key, the slot's number (0 to the limit - 1) and the process holding it;
 * a slot whose process died (no heartbeat, no database session) is free again
 * (UploadSlotRepo).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE upload_slots (
    key_id text NOT NULL,
    slot integer NOT NULL,
    node_id text NOT NULL,
    taken_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (key_id, slot)
  )`
})

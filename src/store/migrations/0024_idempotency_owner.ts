/**
 * Migration 0024_idempotency_owner: an Idempotency-Key record names the process
 * that claimed it (`claimed_by`, its node id). A record left pending by a
 * process that died (killed while handling the request) is taken over by the
 * next request with that key and body instead of answering 503 until the
 * record expires (24 hours).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE idempotency_keys ADD COLUMN claimed_by text`
})

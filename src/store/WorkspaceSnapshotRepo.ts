/**
 * The PostgreSQL implementation of SnapshotStore: one row per thread in
 * `workspace_snapshots`, the sealed archive in a `bytea` column and the id of
 * the master key that sealed it in `key_id` (written and read in one statement
 * each; a row is deleted with its thread).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Schema } from "effect"
import type { ThreadId } from "../../domain/Ids.ts"
import { SnapshotStore } from "../workspace/SnapshotStore.ts"
import { SnapshotUnavailable } from "../workspace/SnapshotUnavailable.ts"

const decodeHeads = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  version: Schema.NumberFromString,
  key_id: Schema.NullOr(Schema.String),
  node: Schema.String,
  bytes: Schema.NumberFromString,
  sha256: Schema.String,
  created_at: Schema.String
})))
const decodeData = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ data: Schema.Uint8Array })))
const decodeVersion = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ version: Schema.NumberFromString })))

const unavailable = (what: string) => (cause: { readonly message: string }) =>
  new SnapshotUnavailable({ message: `${what}: ${cause.message}` })

export const layer = Layer.effect(SnapshotStore)(
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    return SnapshotStore.of({
      head: Effect.fn("WorkspaceSnapshotRepo.head")(function*(threadId: ThreadId) {
        const rows =
          yield* sql`SELECT version::text, key_id, node, bytes::text, sha256, created_at FROM workspace_snapshots
          WHERE thread_id = ${threadId}`.pipe(Effect.flatMap(decodeHeads), Effect.orDie)
        return Option.map(Option.fromNullishOr(rows[0]), (r) => ({
          version: r.version,
          keyId: r.key_id,
          node: r.node,
          bytes: r.bytes,
          sha256: r.sha256,
          createdAt: r.created_at
        }))
      }),
      read: Effect.fn("WorkspaceSnapshotRepo.read")(function*(threadId: ThreadId, version: number) {
        const rows =
          yield* sql`SELECT data FROM workspace_snapshots WHERE thread_id = ${threadId} AND version = ${version}`.pipe(
            Effect.flatMap(decodeData),
            Effect.mapError(unavailable("the workspace snapshot could not be read"))
          )
        return Option.map(Option.fromNullishOr(rows[0]), (r) => r.data)
      }),
      write: Effect.fn("WorkspaceSnapshotRepo.write")(function*(threadId: ThreadId, snapshot) {
        const rows =
          yield* sql`INSERT INTO workspace_snapshots (thread_id, version, key_id, node, bytes, sha256, data, created_at)
          VALUES (${threadId}, 1, ${snapshot.keyId}, ${snapshot.node}, ${snapshot.data.byteLength}, ${snapshot.sha256}, ${snapshot.data}, ${snapshot.createdAt})
          ON CONFLICT (thread_id) DO UPDATE SET version = workspace_snapshots.version + 1, key_id = excluded.key_id,
            node = excluded.node, bytes = excluded.bytes, sha256 = excluded.sha256, data = excluded.data,
            created_at = excluded.created_at
          RETURNING version::text`.pipe(
            Effect.flatMap(decodeVersion),
            Effect.mapError(unavailable("the workspace snapshot could not be stored"))
          )
        const row = rows[0]
        return row === undefined
          ? yield* new SnapshotUnavailable({
            message: "the workspace snapshot could not be stored: its thread is gone"
          })
          : row.version
      }),
      remove: Effect.fn("WorkspaceSnapshotRepo.remove")(function*(threadIds: ReadonlyArray<ThreadId>) {
        if (threadIds.length === 0) return
        yield* sql`DELETE FROM workspace_snapshots WHERE ${sql.in("thread_id", threadIds)}`.pipe(Effect.orDie)
      })
    })
  })
)

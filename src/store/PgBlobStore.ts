/**
 * The PostgreSQL artifact store (SVC_ARTIFACT_STORE=postgres, the default):
 * one row per object in `artifact_blobs`, the bytes in a bytea column, on the
 * service's own database (PostgreSQL or the embedded PGlite). One statement
 * per operation; a copy never leaves the database.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Schema } from "effect"
import { BlobStore, BlobStoreFailed } from "../artifacts/BlobStore.ts"

const decodeData = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ data: Schema.Uint8Array })))
const decodeKeys = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ key: Schema.String })))

export const layer = Layer.effect(BlobStore)(
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const failed = (operation: BlobStoreFailed["operation"], key: string) => (cause: unknown) =>
      new BlobStoreFailed({ operation, key, cause })
    return BlobStore.of({
      put: Effect.fn("PgBlobStore.put")(function*(key: string, bytes: Uint8Array, contentType: string) {
        yield* sql`INSERT INTO artifact_blobs (key, content_type, bytes, data)
          VALUES (${key}, ${contentType}, ${bytes.byteLength}, ${bytes})
          ON CONFLICT (key) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes, data = excluded.data`
          .pipe(Effect.mapError(failed("put", key)))
      }),
      get: Effect.fn("PgBlobStore.get")(function*(key: string) {
        const rows = yield* sql`SELECT data FROM artifact_blobs WHERE key = ${key}`.pipe(
          Effect.flatMap(decodeData),
          Effect.mapError(failed("get", key))
        )
        return Option.map(Option.fromNullishOr(rows[0]), (r) => r.data)
      }),
      delete: Effect.fn("PgBlobStore.delete")(function*(key: string) {
        yield* sql`DELETE FROM artifact_blobs WHERE key = ${key}`.pipe(Effect.mapError(failed("delete", key)))
      }),
      copy: Effect.fn("PgBlobStore.copy")(function*(from: string, to: string) {
        const rows = yield* sql`INSERT INTO artifact_blobs (key, content_type, bytes, data)
          SELECT ${to}, content_type, bytes, data FROM artifact_blobs WHERE key = ${from}
          ON CONFLICT (key) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes, data = excluded.data
          RETURNING key`.pipe(Effect.flatMap(decodeKeys), Effect.mapError(failed("copy", from)))
        if (rows.length === 0) {
          return yield* new BlobStoreFailed({ operation: "copy", key: from, cause: "no such object" })
        }
      })
    })
  })
)

/**
 * The PostgreSQL artifact store (SVC_ARTIFACT_STORE=postgres, the default),
 * on the service's own database (PostgreSQL or the embedded PGlite). An
 * object is a header row in `artifact_blobs` and its bytes in
 * `artifact_blob_chunks`, `chunkBytes` a row (migration 0029_blob_chunks).
 * Every chunk is written, read and copied by a statement of its own, outside
 * any transaction: a large object never holds a connection, nor PGlite's one
 * connection and the event loop it runs on, for more than one chunk, and other
 * requests' statements run between them. The header is written first, pending,
 * and completed once every chunk is in: a pending object is not readable, and
 * one whose writer died is swept (`sweep`). Objects written before chunking
 * keep their bytes in the header's `data` and are read as they are.
 */
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { BlobStore, BlobStoreFailed, type BlobWriter, putThrough } from "../artifacts/BlobStore.ts"

/** Bytes per chunk row: one statement of this size keeps PGlite (and the event loop it shares) for milliseconds. */
export const chunkBytes = 256 * 1024

/** At most this many abandoned objects are swept per pass. */
const sweepBatch = 100

const decodeHeader = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  content_type: Schema.String,
  bytes: Schema.NumberFromString,
  chunks: Schema.NullOr(Schema.Number),
  data: Schema.NullOr(Schema.Uint8Array)
})))
const decodeData = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ data: Schema.Uint8Array })))
const decodeKeys = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ key: Schema.String })))

/** Pieces of any size in, `size`-byte chunks out (the last one shorter). */
const rechunker = (size: number) => {
  let pieces: Array<Uint8Array> = []
  let held = 0
  return {
    /** Takes `bytes`; answers the whole chunks now filled. */
    push: (bytes: Uint8Array): ReadonlyArray<Uint8Array> => {
      if (bytes.byteLength === 0) return []
      pieces.push(bytes)
      held += bytes.byteLength
      if (held < size) return []
      const all = Buffer.concat(pieces, held)
      const full = Math.floor(held / size)
      const chunks = Array.from({ length: full }, (_, i) => all.subarray(i * size, (i + 1) * size))
      const rest = all.subarray(full * size)
      pieces = rest.byteLength === 0 ? [] : [rest]
      held = rest.byteLength
      return chunks
    },
    /** What is left: the last, shorter chunk (none when nothing is left). */
    flush: (): ReadonlyArray<Uint8Array> => {
      const rest = held === 0 ? [] : [Buffer.concat(pieces, held)]
      pieces = []
      held = 0
      return rest
    }
  }
}

export const layer = Layer.effect(BlobStore)(
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const failed = (operation: BlobStoreFailed["operation"], key: string) => (cause: unknown) =>
      new BlobStoreFailed({ operation, key, cause })

    /** The header row, pending, with no chunks: what was stored under `key` is gone. */
    const begin = (key: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* sql`WITH gone AS (DELETE FROM artifact_blob_chunks WHERE key = ${key})
          INSERT INTO artifact_blobs (key, content_type, bytes, data, chunks, pending_since)
          VALUES (${key}, '', 0, NULL, NULL, ${now})
          ON CONFLICT (key) DO UPDATE SET content_type = '', bytes = 0, data = NULL, chunks = NULL,
            pending_since = excluded.pending_since`
      })

    const complete = (key: string, contentType: string, bytes: number, chunks: number) =>
      Effect.flatMap(
        sql`UPDATE artifact_blobs SET content_type = ${contentType}, bytes = ${bytes}, chunks = ${chunks},
            pending_since = NULL
          WHERE key = ${key} AND pending_since IS NOT NULL RETURNING key`.pipe(Effect.flatMap(decodeKeys)),
        (rows) => rows.length === 1 ? Effect.void : Effect.fail("the object was swept before it was finished")
      )

    /** The header and every chunk, in one statement. */
    const remove = (key: string) =>
      sql`WITH chunks AS (DELETE FROM artifact_blob_chunks WHERE key = ${key})
        DELETE FROM artifact_blobs WHERE key = ${key}`

    const abortQuietly = (key: string) =>
      remove(key).pipe(
        Effect.asVoid,
        Effect.catch((cause) => Effect.logWarning(`artifact store: could not remove the unfinished '${key}'`, cause))
      )

    const writer = Effect.fn("PgBlobStore.writer")(function*(key: string) {
      yield* begin(key).pipe(Effect.mapError(failed("put", key)))
      const chunks = rechunker(chunkBytes)
      let seq = 0
      let bytes = 0
      const insert = (chunk: Uint8Array) =>
        Effect.suspend(() => {
          const at = seq++
          bytes += chunk.byteLength
          return sql`INSERT INTO artifact_blob_chunks (key, seq, data) VALUES (${key}, ${at}, ${chunk})`
        })
      const write = (piece: Uint8Array) =>
        Effect.forEach(chunks.push(piece), insert, { discard: true }).pipe(
          Effect.mapError(failed("put", key)),
          Effect.withSpan("PgBlobStore.write")
        )
      const finish = (contentType: string) =>
        Effect.forEach(chunks.flush(), insert, { discard: true }).pipe(
          Effect.andThen(Effect.suspend(() => complete(key, contentType, bytes, seq))),
          Effect.mapError(failed("put", key)),
          Effect.withSpan("PgBlobStore.finish")
        )
      const handle: BlobWriter = { write, finish, abort: abortQuietly(key) }
      return handle
    })

    const header = (key: string, operation: BlobStoreFailed["operation"]) =>
      sql`SELECT content_type, bytes::text AS bytes, chunks, data FROM artifact_blobs
        WHERE key = ${key} AND pending_since IS NULL`.pipe(
        Effect.flatMap(decodeHeader),
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.mapError(failed(operation, key))
      )

    const readChunk = (key: string, seq: number) =>
      sql`SELECT data FROM artifact_blob_chunks WHERE key = ${key} AND seq = ${seq}`.pipe(
        Effect.flatMap(decodeData),
        Effect.flatMap((rows) =>
          rows[0] === undefined ? Effect.fail(`chunk ${seq} is missing`) : Effect.succeed(rows[0].data)
        ),
        Effect.mapError(failed("get", key))
      )

    return BlobStore.of({
      writer,
      put: putThrough(writer),
      get: Effect.fn("PgBlobStore.get")(function*(key: string) {
        const found = yield* header(key, "get")
        if (Option.isNone(found)) return Option.none<Uint8Array>()
        const { bytes, chunks, data } = found.value
        if (data !== null) return Option.some<Uint8Array>(data)
        const whole = new Uint8Array(bytes)
        let at = 0
        for (let seq = 0; seq < (chunks ?? 0); seq++) {
          const chunk = yield* readChunk(key, seq)
          if (at + chunk.byteLength > bytes) {
            return yield* new BlobStoreFailed({ operation: "get", key, cause: "the chunks hold more than the object" })
          }
          whole.set(chunk, at)
          at += chunk.byteLength
        }
        if (at !== bytes) {
          return yield* new BlobStoreFailed({ operation: "get", key, cause: `the chunks hold ${at} of ${bytes} bytes` })
        }
        return Option.some<Uint8Array>(whole)
      }),
      delete: Effect.fn("PgBlobStore.delete")(function*(key: string) {
        yield* remove(key).pipe(Effect.mapError(failed("delete", key)))
      }),
      copy: Effect.fn("PgBlobStore.copy")(function*(from: string, to: string) {
        const found = yield* header(from, "copy")
        if (Option.isNone(found)) {
          return yield* new BlobStoreFailed({ operation: "copy", key: from, cause: "no such object" })
        }
        const source = found.value
        yield* begin(to).pipe(Effect.mapError(failed("copy", to)))
        const chunks = source.chunks ?? 0
        yield* Effect.gen(function*() {
          if (source.data !== null) {
            // Written whole before chunking: copied whole, as it was stored.
            yield* sql`UPDATE artifact_blobs SET data = (SELECT data FROM artifact_blobs WHERE key = ${from})
              WHERE key = ${to}`
          }
          for (let seq = 0; seq < chunks; seq++) {
            yield* sql`INSERT INTO artifact_blob_chunks (key, seq, data)
              SELECT ${to}, seq, data FROM artifact_blob_chunks WHERE key = ${from} AND seq = ${seq}`
          }
          yield* complete(to, source.content_type, source.bytes, chunks)
        }).pipe(Effect.mapError(failed("copy", from)), Effect.onError(() => abortQuietly(to)))
      }),
      sweep: Effect.fn("PgBlobStore.sweep")(function*(beforeMs: number) {
        const rows = yield* sql`SELECT key FROM artifact_blobs WHERE pending_since < ${beforeMs} LIMIT ${sweepBatch}`
          .pipe(Effect.flatMap(decodeKeys), Effect.mapError(failed("sweep", "")))
        yield* Effect.forEach(rows, ({ key }) => remove(key).pipe(Effect.mapError(failed("sweep", key))), {
          discard: true
        })
        return rows.length
      })
    })
  })
)

/**
 * The PostgreSQL artifact store, on PostgreSQL and on the embedded PGlite: an
 * object written in pieces of any size is stored in chunks of `chunkBytes`,
 * one row (one statement) each, and is readable only once finished; an
 * aborted writer leaves nothing and an abandoned one is swept; a copy is made
 * chunk by chunk; a delete takes the header and every chunk; an object stored
 * whole before chunking (its bytes in the header) still reads and copies.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { BlobStore } from "../../../src/artifacts/BlobStore.ts"
import * as Database from "../../../src/store/Database.ts"
import * as Migrations from "../../../src/store/Migrations.ts"
import { chunkBytes, layer as PgBlobStoreLayer } from "../../../src/store/PgBlobStore.ts"
import { testDatabase } from "../../support/TestDatabase.ts"

/** `n` bytes, no two neighbouring chunks alike. */
const bytes = (n: number, seed: number) => new Uint8Array(n).map((_, i) => (i * 31 + seed) % 251)

const concat = (...parts: ReadonlyArray<Uint8Array>) => new Uint8Array(Buffer.concat(parts))

const Rows = Schema.Array(Schema.Struct({ seq: Schema.Number, bytes: Schema.Number }))

const chunksOf = (key: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`SELECT seq, octet_length(data) AS bytes FROM artifact_blob_chunks WHERE key = ${key} ORDER BY seq`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Rows)),
        Effect.orDie
      )
  )

const headers = (key: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`SELECT key FROM artifact_blobs WHERE key = ${key}`.pipe(Effect.map((rows) => rows.length), Effect.orDie)
  )

const read = (key: string) => Effect.map(Effect.flatMap(BlobStore, (blobs) => blobs.get(key)), Option.getOrUndefined)

const same = (a: Uint8Array | undefined, b: Uint8Array) => a !== undefined && Buffer.from(a).equals(Buffer.from(b))

const onPostgres = Layer.unwrap(
  Effect.map(testDatabase, (db) => Database.layerUrl(Redacted.make(db.url)))
)

const onPglite = Layer.unwrap(
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "svc-blobs-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ),
    Database.layerEmbedded
  )
)

const stores = [["PostgreSQL", onPostgres], ["PGlite", onPglite]] as const

for (const [name, database] of stores) {
  const Store = Layer.merge(PgBlobStoreLayer, Migrations.layer).pipe(Layer.provideMerge(database))

  describe(`the PostgreSQL artifact store on ${name}`, () => {
    layer(Store, { timeout: 120_000 })((it) => {
      it.effect("pieces of any size are stored in chunks of chunkBytes, one row each, readable once finished", () =>
        Effect.gen(function*() {
          const blobs = yield* BlobStore
          const pieces = [bytes(100_000, 1), bytes(300_000, 2), bytes(1, 3), bytes(400_000, 4)]
          const writer = yield* blobs.writer("t/one")
          for (const piece of pieces) yield* writer.write(piece)
          // Every full chunk is already written, each by a statement of its own; the object is not readable yet.
          assert.deepStrictEqual(yield* chunksOf("t/one"), [
            { seq: 0, bytes: chunkBytes },
            { seq: 1, bytes: chunkBytes },
            { seq: 2, bytes: chunkBytes }
          ])
          assert.strictEqual(yield* read("t/one"), undefined)
          yield* writer.finish("application/x-test")
          assert.deepStrictEqual(yield* chunksOf("t/one"), [
            { seq: 0, bytes: chunkBytes },
            { seq: 1, bytes: chunkBytes },
            { seq: 2, bytes: chunkBytes },
            { seq: 3, bytes: 800_001 - 3 * chunkBytes }
          ])
          assert.isTrue(same(yield* read("t/one"), concat(...pieces)))

          // put goes through a writer too.
          const whole = bytes(chunkBytes + 10, 5)
          yield* blobs.put("t/put", whole, "application/x-test")
          assert.deepStrictEqual(yield* chunksOf("t/put"), [{ seq: 0, bytes: chunkBytes }, { seq: 1, bytes: 10 }])
          assert.isTrue(same(yield* read("t/put"), whole))
        }))

      it.effect("a copy is made chunk by chunk; a delete takes the header and every chunk", () =>
        Effect.gen(function*() {
          const blobs = yield* BlobStore
          const data = bytes(2 * chunkBytes + 7, 6)
          yield* blobs.put("t/source", data, "application/x-test")
          yield* blobs.copy("t/source", "t/copy")
          assert.deepStrictEqual(yield* chunksOf("t/copy"), yield* chunksOf("t/source"))
          yield* blobs.delete("t/source")
          assert.deepStrictEqual(yield* chunksOf("t/source"), [])
          assert.strictEqual(yield* headers("t/source"), 0)
          assert.strictEqual(yield* read("t/source"), undefined)
          assert.isTrue(same(yield* read("t/copy"), data))
          const missing = yield* Effect.flip(blobs.copy("t/source", "t/again"))
          assert.strictEqual(missing.cause, "no such object")
        }))

      it.effect("an aborted writer leaves nothing; an abandoned one is swept once older than the given time", () =>
        Effect.gen(function*() {
          const blobs = yield* BlobStore
          const aborted = yield* blobs.writer("t/aborted")
          yield* aborted.write(bytes(chunkBytes + 1, 7))
          yield* aborted.abort
          assert.deepStrictEqual(yield* chunksOf("t/aborted"), [])
          assert.strictEqual(yield* headers("t/aborted"), 0)

          const abandoned = yield* blobs.writer("t/abandoned")
          yield* abandoned.write(bytes(chunkBytes, 8))
          // Started at the clock's 0: not before 0, before 1.
          assert.strictEqual(yield* blobs.sweep(0), 0)
          assert.strictEqual(yield* blobs.sweep(1), 1)
          assert.deepStrictEqual(yield* chunksOf("t/abandoned"), [])
          assert.strictEqual(yield* headers("t/abandoned"), 0)
          // A finished object is never swept.
          assert.isTrue(same(yield* read("t/copy"), bytes(2 * chunkBytes + 7, 6)))
        }))

      it.effect("an object stored whole before chunking (its bytes in the header) still reads and copies", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const data = bytes(1000, 9)
          yield* sql`INSERT INTO artifact_blobs (key, content_type, bytes, data)
            VALUES ('t/legacy', 'application/x-test', ${data.byteLength}, ${data})`
          const blobs = yield* BlobStore
          assert.isTrue(same(yield* read("t/legacy"), data))
          yield* blobs.copy("t/legacy", "t/legacy-copy")
          assert.isTrue(same(yield* read("t/legacy-copy"), data))
          yield* blobs.delete("t/legacy")
          assert.strictEqual(yield* read("t/legacy"), undefined)
        }))
    })
  })
}

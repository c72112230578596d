/**
 * Secrets at rest (spec 8): the database holds only AES-256-GCM ciphertext
 * under the master key's id, no table holds a plaintext value, and a new
 * master key (the old one kept for decryption) reads the old values and
 * re-seals a secret when it is rotated; checked against the database itself.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted, Schema } from "effect"
import { createHash } from "node:crypto"
import { Secret } from "../../domain/Secret.ts"
import { parseMasterKey, SecretBox } from "../../src/secrets/SecretBox.ts"
import * as Collection from "../support/Collection.ts"
import * as McpServers from "../support/McpServers.ts"
import { bindToolServer } from "../support/Secrets.ts"
import { testDatabase, withClient } from "../support/TestDatabase.ts"
import * as TestServer from "../support/TestServer.ts"
import { assertNoValue } from "../support/WriteOnly.ts"

const { request } = TestServer
const { create: createSecret } = Collection.secrets

const SealedRow = Schema.Struct({ id: Schema.String, sealed: Schema.String, key_id: Schema.String })
const TableName = Schema.Struct({ table_name: Schema.String })
const Dump = Schema.Struct({ dump: Schema.NullOr(Schema.String) })

const sealedRows = (url: string) =>
  withClient(url, (sql) =>
    Effect.flatMap(
      sql`SELECT id, sealed, key_id FROM secrets ORDER BY id`,
      Schema.decodeUnknownEffect(Schema.Array(SealedRow))
    )).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.id, r]))))

/** Every row of every table of the database, as text. */
const dumpDatabase = (url: string) =>
  withClient(url, (sql) =>
    Effect.gen(function*() {
      const tables = yield* Effect.flatMap(
        sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
        Schema.decodeUnknownEffect(Schema.Array(TableName))
      )
      const dumps = yield* Effect.forEach(tables, ({ table_name }) =>
        Effect.flatMap(
          sql.unsafe(`SELECT string_agg(t::text, E'\\n') AS dump FROM "${table_name.replaceAll("\"", "\"\"")}" t`),
          Schema.decodeUnknownEffect(Schema.Array(Dump))
        ))
      return {
        tables: tables.map((t) => t.table_name),
        text: dumps.flatMap((rows) => rows.map((r) => r.dump ?? "")).join("\n")
      }
    }))

const keyIdOf = (base64Key: string) =>
  createHash("sha256").update(Buffer.from(base64Key, "base64")).digest("hex").slice(0, 16)

const masterKeyOf = (base64Key: string) => {
  const parsed = parseMasterKey(base64Key)
  if (typeof parsed === "string") throw new Error(parsed)
  return parsed
}

/** The tool server test route: 502 (the recorder is no MCP server), and the bearer it was sent. */
const testToolServer = (id: string) =>
  Effect.flatMap(
    request("POST", `/v1/tool-servers/${id}/test`),
    (reply) => Effect.as(TestServer.expectError(reply, 502, "api_error", "service_unavailable"), reply)
  )

describe("secrets at rest", () => {
  it.effect(
    "the database holds only AES-GCM ciphertext under the master key's id; a new master key re-seals on rotate",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const hook = yield* McpServers.authRecorder
        const oldKey = TestServer.testMasterKey
        const newKey = Buffer.alloc(32, 9).toString("base64")
        const oldKeyId = keyIdOf(oldKey)
        const newKeyId = keyIdOf(newKey)
        assert.strictEqual(masterKeyOf(oldKey).id, oldKeyId)
        const valueA = "AT-REST-alpha-7c1d0f"
        const valueB = "AT-REST-bravo-e93b22-ünïcödé"
        const valueA2 = "AT-REST-alpha-rotated-5a8e"

        // ---- first server: the test master key ----
        const first = yield* Effect.gen(function*() {
          const a = yield* createSecret({ name: "rest-a", value: valueA })
          const b = yield* createSecret({ name: "rest-b", value: valueB, metadata: { k: "v" } })
          // The same value sealed twice gives different ciphertexts (random IV).
          const twin = yield* createSecret({ name: "rest-twin", value: valueA })
          const tsA = yield* bindToolServer("ts-rest-a", a.id, `${hook.url}/a`)
          const tsB = yield* bindToolServer("ts-rest-b", b.id, `${hook.url}/b`)
          const probe = yield* testToolServer(tsB.id)
          assertNoValue(probe, valueB)
          return { a, b, twin, tsA, tsB }
        }).pipe(
          Effect.provide(TestServer.layerWith(TestServer.baseConfig(db.url, yield* TestServer.freePort))),
          Effect.orDie
        )
        assert.deepStrictEqual(hook.authorizations("/b"), [`Bearer ${valueB}`])

        const rows = yield* sealedRows(db.url)
        const box = SecretBox.make(masterKeyOf(oldKey), [])
        for (const [secret, value] of [[first.a, valueA], [first.b, valueB], [first.twin, valueA]] as const) {
          const row = rows.get(secret.id)
          assert.isDefined(row)
          if (row === undefined) return
          assert.strictEqual(row.key_id, oldKeyId)
          assert.isFalse(row.sealed.includes(value))
          assert.isFalse(row.sealed.includes(Buffer.from(value).toString("base64")))
          // iv (12) + tag (16) + one byte per byte of plaintext
          assert.strictEqual(Buffer.from(row.sealed, "base64").length, 28 + Buffer.byteLength(value))
          const opened = yield* box.open({ ciphertext: row.sealed, keyId: row.key_id })
          assert.strictEqual(Redacted.value(opened), value)
        }
        assert.notStrictEqual(rows.get(first.a.id)?.sealed, rows.get(first.twin.id)?.sealed)
        // No table of the database holds a plaintext value.
        const dump = yield* dumpDatabase(db.url)
        assert.include(dump.tables, "secrets")
        for (const value of [valueA, valueB]) {
          assert.isFalse(dump.text.includes(value), `plaintext ${value} found in the database`)
          assert.isFalse(dump.text.includes(Buffer.from(value).toString("base64")))
        }

        // ---- second server: a new master key, the old one kept for decryption ----
        yield* Effect.gen(function*() {
          // Values sealed under the old key are still readable and usable.
          assert.deepStrictEqual(
            yield* TestServer.expectOk(yield* request("GET", `/v1/secrets/${first.b.id}`), 200, Secret),
            first.b
          )
          const probeB = yield* testToolServer(first.tsB.id)
          assertNoValue(probeB, valueB)
          const probeA = yield* testToolServer(first.tsA.id)
          assertNoValue(probeA, valueA)
          // Rotating re-seals under the new key.
          const rotated = yield* request("POST", `/v1/secrets/${first.a.id}/rotate`, { body: { value: valueA2 } })
          assert.strictEqual((yield* TestServer.expectOk(rotated, 200, Secret)).configVersion, 2)
          assertNoValue(rotated, valueA, valueA2)
          const probeA2 = yield* testToolServer(first.tsA.id)
          assertNoValue(probeA2, valueA2)
          // New secrets are sealed under the new key.
          yield* createSecret({ name: "rest-c", value: "AT-REST-charlie" })
        }).pipe(
          Effect.provide(
            TestServer.layerWith({
              ...TestServer.baseConfig(db.url, yield* TestServer.freePort),
              masterKey: Option.some(Redacted.make(newKey)),
              previousMasterKeys: [Redacted.make(oldKey)]
            })
          ),
          Effect.orDie
        )
        assert.deepStrictEqual(hook.authorizations("/b"), [`Bearer ${valueB}`])
        assert.deepStrictEqual(hook.authorizations("/a"), [`Bearer ${valueA}`, `Bearer ${valueA2}`])

        const after = yield* sealedRows(db.url)
        const newBox = SecretBox.make(masterKeyOf(newKey), [masterKeyOf(oldKey)])
        const rowA = after.get(first.a.id)
        const rowB = after.get(first.b.id)
        assert.isDefined(rowA)
        assert.isDefined(rowB)
        if (rowA === undefined || rowB === undefined) return
        assert.strictEqual(rowA.key_id, newKeyId)
        assert.strictEqual(Redacted.value(yield* newBox.open({ ciphertext: rowA.sealed, keyId: rowA.key_id })), valueA2)
        assert.strictEqual(rowB.key_id, oldKeyId)
        assert.strictEqual(rowB.sealed, rows.get(first.b.id)?.sealed)
        assert.strictEqual(Redacted.value(yield* newBox.open({ ciphertext: rowB.sealed, keyId: rowB.key_id })), valueB)
        const rowC = [...after.values()].find((r) => !rows.has(r.id))
        assert.strictEqual(rowC?.key_id, newKeyId)
        const dumpAfter = yield* dumpDatabase(db.url)
        assert.isFalse(dumpAfter.text.includes(valueA2))
        assert.isFalse(dumpAfter.text.includes("AT-REST-charlie"))
      }),
    120_000
  )
})

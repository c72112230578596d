/**
 * How uploads share the service, through a real listener on PostgreSQL: a
 * file's bytes are stored in chunks of at most 256 KiB, one row each (no
 * statement carries the whole body), and read back byte for byte; each
 * workspace has a storage quota over its files and unexpired artifacts (413
 * `storage_quota_exceeded` with used and limit, nothing left stored; deleting
 * a file and an artifact's expiry free their bytes; a run's attachment copy
 * and a workspace export count too); and one API key has at most
 * SVC_MAX_CONCURRENT_UPLOADS_PER_KEY uploads in flight (429 `rate_limited`
 * with Retry-After for one more, while another key still uploads).
 */
import { assert } from "@effect/vitest"
import { Effect, Schema, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { createHash, randomBytes } from "node:crypto"
import { FileDeleted, FileObject } from "../../domain/Artifact.ts"
import type { Principal } from "../../domain/Principal.ts"
import { UploadSlots } from "../../src/access/UploadSlots.ts"
import { Artifacts } from "../../src/artifacts/Artifacts.ts"
import { agentWithThread, failureTextsOf, getRun, send, toolStep } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"
import { download, form, post, sameBytes, upload } from "../support/Uploads.ts"

const limit = 1_500_000
const { request, expectOk, expectError } = TestServer
const hex = (data: Uint8Array) => createHash("sha256").update(data).digest("hex")
const random = (bytes: number) => new Uint8Array(randomBytes(bytes))

const Harness = TestServer.layerWithSql({
  artifacts: {
    ...TestServer.baseConfig(undefined, 0).artifacts,
    fileMaxBytes: 1_200_000,
    workspaceQuotaBytes: limit,
    maxConcurrentUploadsPerKey: 2
  },
  // The recovery pass is run by nobody here: the clock moves by days.
  recoveryIntervalMs: 365 * 24 * 60 * 60 * 1000
})

const staging: Principal = { keyId: "key_b", organizationId: "org_acme", workspaceId: "staging" }

const quotaMessage = (field: string, used: number) =>
  `Storing ${field} would pass this workspace's storage quota: ${used} of its ${limit} bytes are used by its files ` +
  "and artifacts (SVC_WORKSPACE_STORAGE_QUOTA_BYTES). Delete files, or wait for artifacts to expire."

/** A 413 storage_quota_exceeded, exactly. */
const expectQuota = (reply: TestServer.Reply, field: string, used: number) =>
  Effect.gen(function*() {
    const error = yield* expectError(reply, 413, "invalid_request_error", "storage_quota_exceeded")
    assert.deepStrictEqual(error, {
      type: "invalid_request_error",
      code: "storage_quota_exceeded",
      message: quotaMessage(field, used),
      request_id: error.request_id,
      details: { field, used, limit }
    })
  })

const Chunk = Schema.Array(Schema.Struct({ seq: Schema.Number, bytes: Schema.Number }))

/** The chunk rows stored under `key`, in order, with their sizes. */
const chunksOf = (key: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`SELECT seq, octet_length(data) AS bytes FROM artifact_blob_chunks WHERE key = ${key} ORDER BY seq`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Chunk)),
        Effect.orDie
      )
  )

/** Every object the store holds (headers and chunks) that no file or artifact row names: none may be left behind. */
const strayObjects = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`SELECT key FROM artifact_blobs
      UNION SELECT key FROM artifact_blob_chunks
    EXCEPT (SELECT 'files/' || id FROM files UNION SELECT 'artifacts/' || id FROM artifacts)`.pipe(Effect.orDie))

const filesOf = (key: string) =>
  Effect.map(
    Effect.flatMap(request("GET", "/v1/files?limit=100", { key }), (reply) =>
      expectOk(reply, 200, Schema.Struct({ data: Schema.Array(FileObject) }))),
    (page) =>
      page.data.map((f) => f.bytes)
  )

const multipartHead = new TextEncoder().encode(
  [
    "--held",
    `Content-Disposition: form-data; name="file"; filename="held.bin"`,
    "Content-Type: application/octet-stream",
    "",
    "first bytes "
  ].join("\r\n")
)
const multipartTail = new TextEncoder().encode("and the last\r\n--held--\r\n")

/**
 * `POST /v1/files` whose body sends its first bytes, then waits for `release`
 * before the rest: an upload held open for as long as the test wants.
 */
const heldUpload = (url: string, key: string, release: Promise<void>) => {
  let step = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (step++ === 0) return controller.enqueue(multipartHead)
      await release
      controller.enqueue(multipartTail)
      controller.close()
    }
  })
  return fetch(`${url}/v1/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "multipart/form-data; boundary=held" },
    body,
    duplex: "half"
  } as RequestInit).then(async (response) => ({ status: response.status, text: await response.text() }))
}

TestServer.suiteWith(Harness)("file storage", (it) => {
  it.effect("a large upload is stored in 256 KiB chunks, one row each, and read back byte for byte with its SHA-256", () =>
    Effect.gen(function*() {
      const data = random(1_000_007)
      const file = yield* upload({ filename: "large.bin", data })
      assert.strictEqual(file.bytes, 1_000_007)
      assert.strictEqual(file.sha256, hex(data))
      assert.deepStrictEqual(yield* chunksOf(`files/${file.id}`), [
        { seq: 0, bytes: 262_144 },
        { seq: 1, bytes: 262_144 },
        { seq: 2, bytes: 262_144 },
        { seq: 3, bytes: 213_575 }
      ])
      const sql = yield* SqlClient.SqlClient
      const header = yield* sql`SELECT bytes::int AS bytes, chunks, pending_since, data FROM artifact_blobs
        WHERE key = ${`files/${file.id}`}`
      assert.deepStrictEqual(header, [{ bytes: 1_000_007, chunks: 4, pending_since: null, data: null }])

      const content = yield* download(`/v1/files/${file.id}/content`)
      assert.strictEqual(content.status, 200)
      assert.isTrue(sameBytes(content.bytes, data))
      assert.strictEqual(hex(content.bytes), file.sha256)

      yield* expectOk(yield* request("DELETE", `/v1/files/${file.id}`), 200, FileDeleted)
      assert.deepStrictEqual(yield* chunksOf(`files/${file.id}`), [])
      assert.deepStrictEqual(yield* strayObjects, [])

      // A replay under an Idempotency-Key streams its bytes again, then answers the first file and keeps none of them.
      const keyed = { headers: { "idempotency-key": "upload-once" } }
      const once = yield* expectOk(yield* post(form([{ filename: "once.bin", data }]), keyed), 200, FileObject)
      const again = yield* expectOk(yield* post(form([{ filename: "once.bin", data }]), keyed), 200, FileObject)
      assert.deepStrictEqual(again, once)
      assert.deepStrictEqual(yield* strayObjects, [])
      yield* expectOk(yield* request("DELETE", `/v1/files/${once.id}`), 200, FileDeleted)
    }))

  it.effect("the quota counts files and unexpired artifacts: 413 storage_quota_exceeded with used and limit, nothing stored; deletes and expiry free bytes", () =>
    Effect.gen(function*() {
      const key = TestServer.Keys.b
      const artifacts = yield* Artifacts
      yield* upload({ filename: "first.bin", data: random(1_000_000) }, key)
      // Refused as its bytes arrive: nothing of it stays, the workspace still has its one file.
      yield* expectQuota(
        yield* post(form([{ filename: "second.bin", data: random(600_000) }]), { key }),
        "file",
        1_000_000
      )
      assert.deepStrictEqual(yield* filesOf(key), [1_000_000])
      assert.deepStrictEqual(yield* strayObjects, [])
      // Under an Idempotency-Key it is refused once its bytes are in (a replay must reach its first answer): the same.
      const keyed = { key, headers: { "idempotency-key": "second" } }
      yield* expectQuota(
        yield* post(form([{ filename: "second.bin", data: random(600_000) }]), keyed),
        "file",
        1_000_000
      )
      assert.deepStrictEqual(yield* filesOf(key), [1_000_000])
      assert.deepStrictEqual(yield* strayObjects, [])

      // Another workspace's quota is its own.
      const other = yield* upload({ filename: "other.bin", data: random(600_000) }, TestServer.Keys.c)

      // An artifact counts: an export of 300,000 bytes leaves room for 200,000 more.
      yield* artifacts.put({
        owner: staging,
        kind: "export",
        filename: "export.bin",
        mediaType: "application/octet-stream",
        data: random(300_000)
      })
      yield* expectQuota(
        yield* post(form([{ filename: "third.bin", data: random(300_000) }]), { key }),
        "file",
        1_300_000
      )
      const refused = yield* Effect.flip(artifacts.put({
        owner: staging,
        kind: "export",
        filename: "big.bin",
        mediaType: "application/octet-stream",
        data: random(300_000)
      }))
      if (refused._tag !== "PayloadTooLarge") return assert.fail(`expected a 413, got ${refused._tag}`)
      assert.deepStrictEqual({ code: refused.code, message: refused.message, details: refused.details }, {
        code: "storage_quota_exceeded",
        message: quotaMessage("data", 1_300_000),
        details: { field: "data", used: 1_300_000, limit }
      })
      assert.deepStrictEqual(yield* strayObjects, [])

      // Deleting the file frees its bytes.
      const [first] = (yield* expectOk(
        yield* request("GET", "/v1/files", { key }),
        200,
        Schema.Struct({ data: Schema.Array(FileObject) })
      )).data
      yield* expectOk(yield* request("DELETE", `/v1/files/${first.id}`, { key }), 200, FileDeleted)
      yield* upload({ filename: "third.bin", data: random(300_000) }, key)
      // 600,000 stored: a million more would pass the limit while the export has not expired...
      yield* expectQuota(
        yield* post(form([{ filename: "fourth.bin", data: random(1_000_000) }]), { key }),
        "file",
        600_000
      )
      // ...and fits once it has (30 days, SVC_ARTIFACT_RETENTION_DAYS), before the purge even ran.
      yield* TestClock.adjust("31 days")
      yield* upload({ filename: "fourth.bin", data: random(1_000_000) }, key)
      assert.deepStrictEqual(yield* filesOf(key), [1_000_000, 300_000])
      yield* expectOk(yield* request("DELETE", `/v1/files/${other.id}`, { key: TestServer.Keys.c }), 200, FileDeleted)
    }))

  it.effect("a run's attachment copy counts: a run whose copy would pass the quota is 413 naming the item, nothing copied", () =>
    Effect.gen(function*() {
      const image = yield* upload({ filename: "photo.png", type: "image/png", data: random(900_000) })
      const { thread } = yield* agentWithThread({})
      const sql = yield* SqlClient.SqlClient
      const before = yield* sql`SELECT count(*)::int AS n FROM artifacts`
      const reply = yield* request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: { text: "look at it", attachments: [{ fileId: image.id }] } },
        headers: { accept: "application/json" }
      })
      yield* expectQuota(reply, "input.attachments[0].fileId", 900_000)
      assert.deepStrictEqual(yield* sql`SELECT count(*)::int AS n FROM artifacts`, before)
      assert.deepStrictEqual(yield* strayObjects, [])
      yield* expectOk(yield* request("DELETE", `/v1/files/${image.id}`), 200, FileDeleted)
    }))

  it.effect("a workspace export that does not fit is the tool error storage_quota_exceeded; the run goes on", () =>
    Effect.gen(function*() {
      // Key a's workspace, filled to its limit.
      const filler = yield* upload({ filename: "filler.bin", data: random(1_200_000) })
      const rest = yield* upload({ filename: "rest.bin", data: random(limit - 1_200_000) })
      const { thread } = yield* agentWithThread({
        workspace: { type: "managed", shell: true, network: { mode: "offline" } }
      })
      const { runId, parsed } = yield* send(
        thread.id,
        [
          toolStep("write_file", { path: "out/report.txt", content: "numbers\n" }),
          toolStep("workspace_export_artifact", { path: "out/report.txt" })
        ].join("\n")
      )
      assert.deepStrictEqual(failureTextsOf(parsed.chunks), [
        `storage_quota_exceeded: the export could not be stored: ${quotaMessage("data", limit)}`
      ])
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      for (const file of [filler, rest]) {
        yield* expectOk(yield* request("DELETE", `/v1/files/${file.id}`), 200, FileDeleted)
      }
      assert.deepStrictEqual(yield* strayObjects, [])
    }))

  it.effect("one key has at most 2 uploads in flight: a third is 429 rate_limited with Retry-After; another key still uploads", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const slots = yield* UploadSlots
      const { promise: release, resolve } = Promise.withResolvers<void>()
      const held = [heldUpload(api.url, TestServer.Keys.a, release), heldUpload(api.url, TestServer.Keys.a, release)]
      // Both hold a slot of key a (their bodies are still arriving).
      yield* slots.inFlight.pipe(
        Stream.filter((inFlight) => [...inFlight.values()].includes(2)),
        Stream.take(1),
        Stream.runDrain
      )
      const third = yield* post(form([{ filename: "third.bin", data: "third" }]))
      const error = yield* expectError(third, 429, "rate_limit_error", "rate_limited")
      assert.strictEqual(
        error.message,
        "This API key already has 2 uploads in progress, the most it may have at once " +
          "(SVC_MAX_CONCURRENT_UPLOADS_PER_KEY); retry after 1 s."
      )
      assert.strictEqual(third.headers.get("retry-after"), "1")
      // Another key of the same workspace is not held back.
      const admin = yield* upload({ filename: "admin.bin", data: "admin's" }, TestServer.Keys.admin)

      resolve()
      const answers = yield* Effect.promise(() => Promise.all(held))
      const stored = answers.map((a) => Schema.decodeUnknownSync(Schema.fromJsonString(FileObject))(a.text))
      assert.deepStrictEqual(answers.map((a) => a.status), [200, 200])
      assert.deepStrictEqual(stored.map((f) => f.bytes), [24, 24])
      // The slots are free again.
      const after = yield* upload({ filename: "after.bin", data: "after" })
      for (const file of [...stored, admin, after]) {
        yield* expectOk(yield* request("DELETE", `/v1/files/${file.id}`), 200, FileDeleted)
      }
    }))
})

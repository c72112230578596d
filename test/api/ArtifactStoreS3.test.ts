/**
 * The S3 artifact store (SVC_ARTIFACT_STORE=s3) against a real S3-compatible
 * server (s3rver, started by the test, checking request signatures): the
 * store's put / get / copy / delete, a multipart upload of an object larger
 * than a part, objects where the prefix says, a file
 * uploaded through the API and read back byte for byte, attached to a run
 * (copied inside the bucket) and deleted; and a store that cannot be reached
 * is 503 service_unavailable.
 */
import { assert } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { FileDeleted } from "../../domain/Artifact.ts"
import type { Principal } from "../../domain/Principal.ts"
import { BlobStore } from "../../src/artifacts/BlobStore.ts"
import { fileKey, Files } from "../../src/artifacts/Files.ts"
import * as S3Server from "../support/S3Server.ts"
import { testDatabase } from "../support/TestDatabase.ts"
import * as TestServer from "../support/TestServer.ts"
import { download, everyByte, form, post, sameBytes, upload } from "../support/Uploads.ts"

const prefix = "svc/"
const prod: Principal = { keyId: "key_a", organizationId: "org_acme", workspaceId: "prod" }
/** The S3 server, and the service storing its artifacts there. */
class S3Endpoint extends Context.Service<S3Endpoint, string>()("test/S3Endpoint") {}

const serviceOn = (endpoint: string) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const db = yield* testDatabase
      const config = TestServer.baseConfig(db.url, yield* TestServer.freePort)
      return TestServer.layerWith({
        ...config,
        artifacts: { ...config.artifacts, store: S3Server.storeConfig(endpoint, prefix) }
      })
    })
  )

const Harness = Layer.unwrap(
  Effect.map(S3Server.start, ({ endpoint }) => Layer.merge(serviceOn(endpoint), Layer.succeed(S3Endpoint)(endpoint)))
)

TestServer.suiteWith(Harness)("S3 artifact store", (it) => {
  it.effect("put, get, copy and delete reach the bucket under SVC_S3_PREFIX", () =>
    Effect.gen(function*() {
      const endpoint = yield* S3Endpoint
      const blobs = yield* BlobStore
      const data = everyByte(16)
      yield* blobs.put("probe/one", data, "image/png")
      const stored = yield* S3Server.objectAt(endpoint, "svc/probe/one")
      assert.strictEqual(stored?.contentType, "image/png")
      assert.isTrue(sameBytes(stored?.bytes, data))
      assert.isTrue(sameBytes(Option.getOrUndefined(yield* blobs.get("probe/one")), data))

      yield* blobs.copy("probe/one", "probe/two")
      assert.isTrue(sameBytes(Option.getOrUndefined(yield* blobs.get("probe/two")), data))
      yield* blobs.delete("probe/one")
      assert.isTrue(Option.isNone(yield* blobs.get("probe/one")))
      assert.strictEqual(yield* S3Server.objectAt(endpoint, "svc/probe/one"), undefined)
      yield* blobs.delete("probe/one")
      assert.isTrue(sameBytes(Option.getOrUndefined(yield* blobs.get("probe/two")), data))
      const missing = yield* Effect.flip(blobs.copy("probe/none", "probe/three"))
      assert.strictEqual(missing._tag, "BlobStoreFailed")
    }))

  it.effect("an object larger than a part (8 MiB) goes up as a multipart upload and is read back whole", () =>
    Effect.gen(function*() {
      const endpoint = yield* S3Endpoint
      const blobs = yield* BlobStore
      const pieces = Array.from({ length: 5 }, (_, i) => everyByte(8 * 1024).map((b) => (b + i) % 256))
      const writer = yield* blobs.writer("probe/large")
      for (const piece of pieces) yield* writer.write(piece)
      yield* writer.finish("application/x-large")
      const whole = new Uint8Array(Buffer.concat(pieces))
      assert.strictEqual(whole.byteLength, 10 * 1024 * 1024)
      assert.isTrue(sameBytes((yield* S3Server.objectAt(endpoint, "svc/probe/large"))?.bytes, whole))
      assert.isTrue(sameBytes(Option.getOrUndefined(yield* blobs.get("probe/large")), whole))
      yield* blobs.delete("probe/large")
    }))

  it.effect("a file uploaded through the API is stored in the bucket, read back whole, attached to a run and deleted", () =>
    Effect.gen(function*() {
      const endpoint = yield* S3Endpoint
      const data = everyByte(64)
      const file = yield* upload({ filename: "bytes.bin", data })
      const stored = yield* S3Server.objectAt(endpoint, `svc/${fileKey(file.id)}`)
      assert.isTrue(sameBytes(stored?.bytes, data))
      assert.strictEqual(stored?.contentType, "application/octet-stream")
      const content = yield* download(`/v1/files/${file.id}/content`)
      assert.isTrue(sameBytes(content.bytes, data))

      const artifact = yield* (yield* Files).toArtifact(prod, file.id, { runId: null, threadId: null })
      assert.isTrue(sameBytes((yield* S3Server.objectAt(endpoint, `svc/artifacts/${artifact.id}`))?.bytes, data))
      const deleted = yield* TestServer.expectOk(
        yield* TestServer.request("DELETE", `/v1/files/${file.id}`),
        200,
        FileDeleted
      )
      assert.strictEqual(deleted.id, file.id)
      assert.strictEqual(yield* S3Server.objectAt(endpoint, `svc/${fileKey(file.id)}`), undefined)
      assert.isTrue(sameBytes((yield* download(`/v1/artifacts/${artifact.id}`)).bytes, data))
    }))
})

/** Port 9 (discard) refuses: the store cannot be reached. */
TestServer.suiteWith(serviceOn("http://127.0.0.1:9"))("S3 artifact store unreachable", (it) => {
  it.effect("an upload is 503 service_unavailable and leaves no file", () =>
    Effect.gen(function*() {
      const reply = yield* post(form([{ filename: "a.txt", data: "a" }]))
      const error = yield* TestServer.expectError(reply, 503, "api_error", "service_unavailable")
      assert.include(error.message, "artifact store")
      const list = yield* TestServer.request("GET", "/v1/files")
      assert.include(list.text, `"data":[]`)
    }))
})

/**
 * Artifacts (spec 4.5 `svcArtifactId`, 4.3 rule 1) on the PostgreSQL store:
 * `GET /v1/artifacts/:id` answers the bytes to the owning workspace only, a
 * file attached to a run is copied into a run-scoped artifact, signed URLs
 * work without an API key until they expire (TestClock), retention purges
 * artifacts and their bytes in the recovery pass, and with
 * SVC_ARTIFACT_STORE=none every storage feature is 400 artifact_storage_unconfigured.
 */
import { assert } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { ArtifactMetadata } from "../../domain/Artifact.ts"
import { type ArtifactId, FileId, type ThreadId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import { artifactKey, Artifacts } from "../../src/artifacts/Artifacts.ts"
import { BlobStore } from "../../src/artifacts/BlobStore.ts"
import { Files } from "../../src/artifacts/Files.ts"
import { RunRecovery } from "../../src/runs/RunRecovery.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread } from "../support/Conversation.ts"
import { expectDenied, expectInvalid, expectNotFound, otherTenants } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"
import { download, everyByte, form, post, replyOf, sameBytes, upload } from "../support/Uploads.ts"

/** Key a's caller (org_acme / prod), as the service sees it. */
const prod: Principal = { keyId: "key_a", organizationId: "org_acme", workspaceId: "prod" }
const staging: Principal = { keyId: "key_b", organizationId: "org_acme", workspaceId: "staging" }

/** An export of `data` stored for key a's workspace. */
const storeExport = (data: Uint8Array, threadId: ThreadId | null = null) =>
  Effect.flatMap(
    Artifacts,
    (artifacts) =>
      artifacts.put({ owner: prod, threadId, kind: "export", filename: "chart.png", mediaType: "image/png", data })
  )

/** The signed URL, pointed at the test listener instead of SVC_PUBLIC_URL. */
const local = (url: string) => Effect.map(TestServer.TestApi, (api) => url.replace("http://svc.test", api.url))

const suiteConfig = {
  artifacts: { ...TestServer.baseConfig(undefined, 0).artifacts, fileMaxBytes: 64 * 1024 },
  // The tests run the recovery pass themselves: the scheduled one would wake every 30 s across the days the clock moves.
  recoveryIntervalMs: 7 * 24 * 60 * 60 * 1000
}

TestServer.suite(suiteConfig)("artifacts", (it) => {
  it.effect("GET /v1/artifacts/:id answers the bytes with their headers to the owning workspace; /metadata the record; 403 elsewhere", () =>
    Effect.gen(function*() {
      const data = everyByte(4)
      const createdAt = yield* TestServer.nowIso
      const artifact = yield* storeExport(data)
      assert.match(artifact.id, /^art_[0-9A-Za-z]{22}$/)
      const content = yield* download(`/v1/artifacts/${artifact.id}`)
      assert.strictEqual(content.status, 200)
      assert.isTrue(sameBytes(content.bytes, data))
      assert.strictEqual(content.headers.get("content-type"), "image/png")
      assert.strictEqual(content.headers.get("content-length"), "1024")
      assert.strictEqual(
        content.headers.get("content-disposition"),
        `attachment; filename="chart.png"; filename*=UTF-8''chart.png`
      )
      assert.strictEqual(content.headers.get("x-content-type-options"), "nosniff")

      const metadata = yield* TestServer.expectOk(
        yield* TestServer.request("GET", `/v1/artifacts/${artifact.id}/metadata`),
        200,
        ArtifactMetadata
      )
      assert.deepStrictEqual(metadata, {
        id: artifact.id,
        object: "artifact",
        kind: "export",
        runId: null,
        threadId: null,
        filename: "chart.png",
        mediaType: "image/png",
        bytes: 1024,
        sha256: artifact.sha256,
        createdAt,
        expiresAt: new Date(Date.parse(createdAt) + 30 * 24 * 60 * 60 * 1000).toISOString()
      })

      for (const tenant of otherTenants) {
        yield* expectDenied(replyOf(yield* download(`/v1/artifacts/${artifact.id}`, tenant.key)))
        yield* expectDenied(
          yield* TestServer.request("GET", `/v1/artifacts/${artifact.id}/metadata`, { key: tenant.key })
        )
      }
      const direct = yield* Effect.flip((yield* Artifacts).get(staging, artifact.id))
      assert.strictEqual(direct._tag, "PermissionDenied")
      assert.isTrue(sameBytes(yield* (yield* Artifacts).read(artifact.id), data))
      yield* expectNotFound(replyOf(yield* download("/v1/artifacts/art_0000000000000000000000")), "artifact_not_found")
      yield* expectNotFound(replyOf(yield* download("/v1/artifacts/file_0000000000000000000000")), "artifact_not_found")
      const tooLarge = yield* Effect.flip(storeExport(new Uint8Array(64 * 1024 + 1)))
      assert.strictEqual(tooLarge._tag, "PayloadTooLarge")
    }))

  it.effect("a file attached to a run becomes an attachment artifact, a copy that outlives the file; 404/403 name the item", () =>
    Effect.gen(function*() {
      const files = yield* Files
      const { thread } = yield* agentWithThread()
      const data = everyByte(3)
      const file = yield* upload({ filename: "notes.bin", type: "application/x-notes", data })
      const artifact = yield* files.toArtifact(prod, file.id, {
        runId: null,
        threadId: thread.id,
        item: "input.attachments[0].fileId"
      })
      assert.deepInclude(artifact, {
        kind: "attachment",
        threadId: thread.id,
        runId: null,
        filename: "notes.bin",
        mediaType: "application/x-notes",
        bytes: data.length,
        sha256: file.sha256
      })
      yield* TestServer.request("DELETE", `/v1/files/${file.id}`)
      const content = yield* download(`/v1/artifacts/${artifact.id}`)
      assert.isTrue(sameBytes(content.bytes, data))

      const theirs = yield* upload({ filename: "theirs.txt", data: "staging's" }, TestServer.Keys.b)
      const denied = yield* Effect.flip(
        files.toArtifact(prod, theirs.id, { runId: null, threadId: null, item: "input.attachments[1].fileId" })
      )
      assert.strictEqual(denied._tag, "PermissionDenied")
      assert.isTrue(denied.message.startsWith("input.attachments[1].fileId: "), denied.message)
      const missing = yield* Effect.flip(
        files.toArtifact(prod, FileId.make("file_0000000000000000000000"), {
          runId: null,
          threadId: null,
          item: "input.attachments[2].fileId"
        })
      )
      assert.deepInclude(missing, { _tag: "NotFound", code: "file_not_found" })
      assert.isTrue(missing.message.startsWith("input.attachments[2].fileId: "), missing.message)
    }))

  it.effect("a signed URL serves the bytes without an API key until it expires; a forged or altered one is 403", () =>
    Effect.gen(function*() {
      const artifacts = yield* Artifacts
      const data = everyByte(2)
      const artifact = yield* storeExport(data)
      const other = yield* storeExport(everyByte(1))
      const link = yield* artifacts.signedLink(artifact.id, 60_000)
      assert.match(
        link.url,
        new RegExp(
          `^http://svc\\.test/v1/artifacts/${artifact.id}/download\\?expires=\\d+&signature=[A-Za-z0-9_-]{43}$`
        )
      )
      assert.strictEqual(link.url, yield* artifacts.signedUrl(artifact.id, 60_000))
      const url = yield* local(link.url)

      const served = yield* download(url, null)
      assert.strictEqual(served.status, 200)
      assert.isTrue(sameBytes(served.bytes, data))
      assert.strictEqual(served.headers.get("content-type"), "image/png")
      assert.strictEqual(served.headers.get("x-content-type-options"), "nosniff")

      const forged = [
        url.replace(/signature=.{5}/, "signature=AAAAA"),
        url.replace(artifact.id, other.id),
        url.replace(/expires=(\d+)/, (_, n: string) => `expires=${Number(n) + 3600}`)
      ]
      for (const bad of forged) {
        const error = yield* expectDenied(replyOf(yield* download(bad, null)))
        assert.include(error.message, "forged")
      }
      yield* expectInvalid(replyOf(yield* download(url.replace(/&signature=.*/, ""), null)), "signature")

      yield* TestClock.adjust("59 seconds")
      assert.strictEqual((yield* download(url, null)).status, 200)
      yield* TestClock.adjust("1 second")
      const expired = yield* expectDenied(replyOf(yield* download(url, null)))
      assert.include(expired.message, `expired at ${link.expiresAt}`)

      // The default lifetime is SVC_ARTIFACT_URL_TTL_SECONDS (an hour).
      const defaultLink = yield* artifacts.signedLink(artifact.id)
      assert.strictEqual(Date.parse(defaultLink.expiresAt) - Date.parse(yield* TestServer.nowIso), 3_600_000)
    }))

  it.effect("retention: the recovery pass purges artifacts (row and bytes) 30 days after they were stored, and those of deleted threads", () =>
    Effect.gen(function*() {
      const recovery = yield* RunRecovery
      const blobs = yield* BlobStore
      const { thread } = yield* agentWithThread()
      const old = yield* storeExport(everyByte(1))
      yield* TestClock.adjust("29 days")
      const recent = yield* storeExport(everyByte(1))
      const ofThread = yield* storeExport(everyByte(1), thread.id)
      yield* recovery.pass
      assert.strictEqual((yield* download(`/v1/artifacts/${old.id}`)).status, 200)

      yield* TestClock.adjust("1 day")
      // Expired: no longer served even before the purge runs.
      yield* expectNotFound(replyOf(yield* download(`/v1/artifacts/${old.id}`)), "artifact_not_found")
      assert.isTrue(Option.isSome(yield* blobs.get(artifactKey(old.id))))
      yield* Collection.threads.del(thread.id)
      yield* recovery.pass
      const purged: ReadonlyArray<ArtifactId> = [old.id, ofThread.id]
      for (const gone of purged) {
        assert.isTrue(Option.isNone(yield* blobs.get(artifactKey(gone))), gone)
        yield* expectNotFound(yield* TestServer.request("GET", `/v1/artifacts/${gone}/metadata`), "artifact_not_found")
      }
      assert.strictEqual((yield* download(`/v1/artifacts/${recent.id}`)).status, 200)
    }))

  it.effect("with a store configured, agents may ask for signed URLs in tool results (include-svc-signed)", () =>
    Effect.gen(function*() {
      const agent = yield* Collection.agents.create({ artifacts: { stream: { urls: "include-svc-signed" } } })
      assert.deepStrictEqual(agent.artifacts, { stream: { urls: "include-svc-signed" } })
    }))
})

TestServer.suite({ artifacts: { ...TestServer.baseConfig(undefined, 0).artifacts, store: { kind: "none" } } })(
  "SVC_ARTIFACT_STORE=none",
  (it) => {
    it.effect("every storage feature is 400 artifact_storage_unconfigured", () =>
      Effect.gen(function*() {
        const unconfigured = (reply: TestServer.Reply) =>
          Effect.flatMap(
            TestServer.expectError(reply, 400, "invalid_request_error", "artifact_storage_unconfigured"),
            (error) => Effect.sync(() => assert.include(error.message, "SVC_ARTIFACT_STORE=none"))
          )
        yield* unconfigured(yield* post(form([{ filename: "a.txt", data: "a" }])))
        yield* unconfigured(yield* TestServer.request("GET", "/v1/files"))
        yield* unconfigured(yield* TestServer.request("GET", "/v1/files/file_0000000000000000000000"))
        yield* unconfigured(replyOf(yield* download("/v1/artifacts/art_0000000000000000000000")))
        yield* unconfigured(yield* TestServer.request("GET", "/v1/artifacts/art_0000000000000000000000/metadata"))
        const put = yield* Effect.flip(storeExport(everyByte(1)))
        assert.deepInclude(put, { _tag: "InvalidRequest", code: "artifact_storage_unconfigured" })
        yield* expectInvalid(
          yield* Collection.agents.post({ artifacts: { stream: { urls: "include-svc-signed" } } }),
          "artifacts.stream.urls",
          "artifact_storage_unconfigured"
        )
      }))
  }
)

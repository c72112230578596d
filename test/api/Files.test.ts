/**
 * The Files API (spec 4.11) on the PostgreSQL artifact store, through a real
 * listener: multipart uploads as `fetch` encodes them, bytes read back exactly,
 * paging, deletes, isolation between workspaces, the refusals of a body that
 * is not one file, media types sniffed from magic bytes, and the OpenAPI
 * document's multipart body.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { createHash } from "node:crypto"
import { FileDeleted, FileObject } from "../../domain/Artifact.ts"
import { Page } from "../../domain/Page.ts"
import { expectDenied, expectInvalid, expectNotFound, otherTenants } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"
import { download, everyByte, form, post, replyOf, sameBytes, upload } from "../support/Uploads.ts"

const maxFileBytes = 256 * 1024
const { request, expectOk, expectError } = TestServer

const hex = (data: Uint8Array) => createHash("sha256").update(data).digest("hex")
const FilePage = Page(FileObject)

TestServer.suite({ artifacts: { ...TestServer.baseConfig(undefined, 0).artifacts, fileMaxBytes: maxFileBytes } })(
  "files",
  (it) => {
    it.effect("an upload is stored whole: get, list, content (every byte value, larger than SVC_MAX_BODY_BYTES), delete, then 404", () =>
      Effect.gen(function*() {
        // 200 KiB: above the test server's 64 KiB JSON body cap, below SVC_FILE_MAX_BYTES.
        const data = everyByte(800)
        const createdAt = yield* TestServer.nowIso
        const file = yield* upload({ filename: "table.bin", type: "application/x-table", data })
        assert.match(file.id, /^file_[0-9A-Za-z]{22}$/)
        assert.deepStrictEqual(file, {
          id: file.id,
          object: "file",
          filename: "table.bin",
          mediaType: "application/x-table",
          bytes: data.length,
          sha256: hex(data),
          createdAt
        })
        assert.deepStrictEqual(yield* expectOk(yield* request("GET", `/v1/files/${file.id}`), 200, FileObject), file)

        const content = yield* download(`/v1/files/${file.id}/content`)
        assert.strictEqual(content.status, 200)
        assert.isTrue(sameBytes(content.bytes, data))
        assert.strictEqual(content.headers.get("content-type"), "application/x-table")
        assert.strictEqual(content.headers.get("content-length"), String(data.length))
        assert.strictEqual(
          content.headers.get("content-disposition"),
          `attachment; filename="table.bin"; filename*=UTF-8''table.bin`
        )
        assert.strictEqual(content.headers.get("x-content-type-options"), "nosniff")

        const deleted = yield* expectOk(yield* request("DELETE", `/v1/files/${file.id}`), 200, FileDeleted)
        assert.deepStrictEqual(deleted, { id: file.id, object: "file", deleted: true })
        yield* expectNotFound(yield* request("GET", `/v1/files/${file.id}`), "file_not_found")
        yield* expectNotFound(replyOf(yield* download(`/v1/files/${file.id}/content`)), "file_not_found")
        yield* expectNotFound(yield* request("DELETE", `/v1/files/${file.id}`), "file_not_found")
      }))

    it.effect("the list is the workspace's files, newest first, paged with limit and cursor", () =>
      Effect.gen(function*() {
        const mine = []
        for (const n of [1, 2, 3]) {
          mine.push(yield* upload({ filename: `page-${n}.txt`, data: `page ${n}` }, TestServer.Keys.b))
          yield* TestClock.adjust("1 second")
        }
        yield* upload({ filename: "other.txt", data: "another workspace's" }, TestServer.Keys.c)
        const first = yield* expectOk(
          yield* request("GET", "/v1/files?limit=2", { key: TestServer.Keys.b }),
          200,
          FilePage
        )
        assert.deepStrictEqual(first.data.map((f) => f.filename), ["page-3.txt", "page-2.txt"])
        assert.isTrue(first.hasMore)
        assert.strictEqual(first.limit, 2)
        const rest = yield* expectOk(
          yield* request("GET", `/v1/files?limit=2&cursor=${first.nextCursor}`, { key: TestServer.Keys.b }),
          200,
          FilePage
        )
        assert.deepStrictEqual(rest, { object: "list", data: [mine[0]], hasMore: false, nextCursor: null, limit: 2 })
      }))

    it.effect("another workspace's file is 403 on every route; an id that cannot exist is 404", () =>
      Effect.gen(function*() {
        const file = yield* upload({ filename: "private.txt", data: "mine" })
        for (const tenant of otherTenants) {
          yield* expectDenied(yield* request("GET", `/v1/files/${file.id}`, { key: tenant.key }))
          yield* expectDenied(replyOf(yield* download(`/v1/files/${file.id}/content`, tenant.key)))
          yield* expectDenied(yield* request("DELETE", `/v1/files/${file.id}`, { key: tenant.key }))
        }
        yield* expectOk(yield* request("GET", `/v1/files/${file.id}`), 200, FileObject)
        yield* expectNotFound(yield* request("GET", "/v1/files/file_0000000000000000000000"), "file_not_found")
        yield* expectNotFound(yield* request("GET", "/v1/files/agent_0000000000000000000000"), "file_not_found")
        yield* TestServer.expectError(
          yield* request("GET", "/v1/files", { key: null }),
          401,
          "authentication_error",
          "invalid_api_key"
        )
      }))

    it.effect("a body that is not one non-empty file part is 400 naming the part; a file too large is 413 file_too_large", () =>
      Effect.gen(function*() {
        yield* expectInvalid(yield* post(form([{ name: "purpose", data: "assistants" }])), "purpose")
        yield* expectInvalid(yield* post(form([{ data: "text, not a file" }])), "file")
        yield* expectInvalid(yield* post(form([])), "file")
        yield* expectInvalid(yield* post(form([{ filename: "empty.txt", data: "" }])), "file")
        yield* expectInvalid(
          yield* post(form([{ filename: "a.txt", data: "a" }, { filename: "b.txt", data: "b" }])),
          "file"
        )
        yield* expectInvalid(
          yield* post(form([{ filename: "a.txt", data: "a" }, { name: "purpose", data: "x" }])),
          "purpose"
        )
        yield* expectInvalid(
          yield* post("--x\r\nnot a part", { contentType: "multipart/form-data; boundary=x" }),
          "body"
        )
        const json = yield* post(JSON.stringify({ file: "x" }), { contentType: "application/json" })
        const unsupported = yield* expectError(json, 415, "invalid_request_error", "unsupported_media_type")
        assert.include(unsupported.message, "multipart/form-data")

        // Just over the limit: read, then refused; far over it: refused from Content-Length, unread.
        for (const size of [maxFileBytes + 1, maxFileBytes + 100 * 1024, 4 * maxFileBytes]) {
          const reply = yield* post(form([{ filename: "big.bin", data: new Uint8Array(size) }]))
          const error = yield* expectError(reply, 413, "invalid_request_error", "file_too_large")
          assert.strictEqual(error.details?.["field"], "file")
          assert.include(error.message, String(maxFileBytes))
        }
        const exactly = yield* upload({ filename: "limit.bin", data: new Uint8Array(maxFileBytes) })
        assert.strictEqual(exactly.bytes, maxFileBytes)
      }))

    it.effect("the media type is the part's, or sniffed from the bytes when absent or application/octet-stream", () =>
      Effect.gen(function*() {
        const bytes = (...values: ReadonlyArray<number | string>) =>
          Uint8Array.from(values.flatMap((v) => (typeof v === "string" ? [...v].map((c) => c.charCodeAt(0)) : [v])))
        const cases: ReadonlyArray<readonly [data: Uint8Array | string, type: string | undefined, expected: string]> = [
          [bytes(0x89, "PNG\r\n", 0x1a, "\n", 0, 0, 0, 13), undefined, "image/png"],
          [bytes(0xff, 0xd8, 0xff, 0xe0, 0, 16, "JFIF"), "application/octet-stream", "image/jpeg"],
          [bytes("GIF89a", 1, 0, 1, 0), undefined, "image/gif"],
          [bytes("RIFF", 36, 0, 0, 0, "WEBPVP8 "), undefined, "image/webp"],
          [bytes("%PDF-1.7\n%", 0xe2, 0xe3), undefined, "application/pdf"],
          ["Héllo, wörld\n\tline two\n", undefined, "text/plain"],
          [" { \"a\": [1, 2, {\"b\": null}] }\n", undefined, "application/json"],
          ["{ not json", undefined, "text/plain"],
          [bytes(0, 1, 2, 3, 0xfe, 0xff), undefined, "application/octet-stream"],
          [bytes(0xc3, 0x28), undefined, "application/octet-stream"],
          // A declared type is kept, JSON included (a file part, never a text field).
          [bytes(0x89, "PNG\r\n", 0x1a, "\n"), "image/x-custom", "image/x-custom"],
          ["{\"a\":1}", "application/json", "application/json"],
          ["<svg/>", "Image/SVG+XML", "image/svg+xml"]
        ]
        for (const [data, type, expected] of cases) {
          const file = yield* upload(type === undefined ? { filename: "f", data } : { filename: "f", data, type })
          assert.strictEqual(file.mediaType, expected, `${type ?? "no type"}: ${String(data)}`)
          const content = yield* download(`/v1/files/${file.id}/content`)
          assert.strictEqual(content.headers.get("content-type"), expected)
          assert.isTrue(sameBytes(content.bytes, typeof data === "string" ? new TextEncoder().encode(data) : data))
        }
      }))

    it.effect("the name is the filename's last path segment; the Content-Disposition carries it safely", () =>
      Effect.gen(function*() {
        // Written by hand: FormData percent-encodes quotes in a filename, other clients send them escaped.
        const raw = [
          "--b0undary",
          `Content-Disposition: form-data; name="file"; filename="reports/2026/rapport final \\"v2\\" é.pdf"`,
          "Content-Type: application/pdf",
          "",
          "%PDF-1.4",
          "--b0undary--",
          ""
        ].join("\r\n")
        const file = yield* expectOk(
          yield* post(raw, { contentType: "multipart/form-data; boundary=b0undary" }),
          200,
          FileObject
        )
        assert.strictEqual(file.filename, "rapport final \"v2\" é.pdf")
        const content = yield* download(`/v1/files/${file.id}/content`)
        assert.strictEqual(
          content.headers.get("content-disposition"),
          `attachment; filename="rapport final _v2_ _.pdf"; filename*=UTF-8''rapport%20final%20%22v2%22%20%C3%A9.pdf`
        )
        const windows = [
          "--b0undary",
          `Content-Disposition: form-data; name="file"; filename="C:\\\\Users\\\\me\\\\photo.png"`,
          "",
          "x",
          "--b0undary--",
          ""
        ].join("\r\n")
        const photo = yield* expectOk(
          yield* post(windows, { contentType: "multipart/form-data; boundary=b0undary" }),
          200,
          FileObject
        )
        assert.strictEqual(photo.filename, "photo.png")
        yield* expectInvalid(yield* post(form([{ filename: "dir/", data: "x" }])), "file")
        yield* expectInvalid(yield* post(form([{ filename: `${"n".repeat(256)}.txt`, data: "x" }])), "file")
      }))

    it.effect("the OpenAPI document shows POST /v1/files as multipart/form-data with a binary file part", () =>
      Effect.gen(function*() {
        const reply = yield* request("GET", "/v1/openapi.json", { key: null })
        const doc = yield* expectOk(reply, 200, Schema.Struct({ paths: Schema.Record(Schema.String, Schema.Unknown) }))
        const upload = Schema.decodeUnknownSync(Schema.Struct({
          post: Schema.Struct({
            requestBody: Schema.Struct({
              content: Schema.Struct({
                "multipart/form-data": Schema.Struct({
                  schema: Schema.Struct({
                    properties: Schema.Struct({
                      file: Schema.Struct({ type: Schema.Literal("string"), format: Schema.Literal("binary") })
                    }),
                    required: Schema.Array(Schema.String)
                  })
                })
              })
            })
          })
        }))(doc.paths["/v1/files"])
        assert.deepStrictEqual(upload.post.requestBody.content["multipart/form-data"].schema.required, ["file"])
      }))
  }
)

/**
 * The SSRF corpus (issue 15) against every user-registered URL field through
 * the API, with private URLs not allowed and names resolved by a real DNS
 * server: every form is 400 url_not_allowed naming the field, and nothing is
 * stored (created resources do not appear, updated ones keep their URL).
 */
import { assert } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { DnsServer } from "../../support/DnsServer.ts"
import * as TestServer from "../../support/TestServer.ts"
import { corpus, type Form, publicUrl, records } from "./UrlCorpus.ts"
import { collections, creations, updates } from "./UrlFields.ts"

const { Keys, request } = TestServer

const Resource = Schema.Record(Schema.String, Schema.Unknown)
const Listing = Schema.Struct({ data: Schema.Array(Resource) })

const TestLayer = Layer.unwrap(
  Effect.map(DnsServer, (dns) => TestServer.layer({ allowPrivateUrls: false, dnsServers: [dns.address] }))
).pipe(Layer.provideMerge(DnsServer.layer(records)))

/** Asserts the refusal: 400, url_not_allowed, `details.field`. */
const expectRefused = (reply: TestServer.Reply, field: string, form: Form, context: string) =>
  Effect.gen(function*() {
    if (reply.status !== 400) {
      assert.fail(`${context}: expected 400 url_not_allowed, got ${reply.status}: ${reply.text}`)
    }
    const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", "url_not_allowed")
    assert.deepStrictEqual(error.details, { field }, context)
    if (form.because !== undefined) assert.match(error.message, form.because, context)
  })

TestServer.suiteWith(TestLayer)("SSRF corpus", (it) => {
  it.effect("every registration accepts the public control URL", () =>
    Effect.gen(function*() {
      for (const creation of creations) {
        const reply = yield* request("POST", creation.path, { body: creation.body(publicUrl), key: Keys.c })
        assert.strictEqual(reply.status, 200, `${creation.what}: ${reply.text}`)
      }
    }))

  it.effect("every form is refused with 400 url_not_allowed on every create, and nothing is stored", () =>
    Effect.gen(function*() {
      for (const creation of creations) {
        for (const form of corpus) {
          const reply = yield* request("POST", creation.path, { body: creation.body(form.url), key: Keys.b })
          yield* expectRefused(
            reply,
            creation.field,
            form,
            `${creation.what} ← ${form.what} (${JSON.stringify(form.url)})`
          )
        }
      }
      for (const path of collections) {
        const listing = yield* TestServer.expectOk(yield* request("GET", path, { key: Keys.b }), 200, Listing)
        assert.deepStrictEqual(listing.data, [], `${path} of the workspace the corpus was sent to`)
      }
    }))

  it.effect("every form is refused with 400 url_not_allowed on every update, and the stored URL is unchanged", () =>
    Effect.gen(function*() {
      for (const update of updates) {
        const path = yield* update.create(publicUrl)
        const before = yield* TestServer.expectOk(yield* request("GET", path), 200, Resource)
        for (const form of corpus) {
          const reply = yield* request("PATCH", path, { body: update.patch(form.url) })
          yield* expectRefused(
            reply,
            update.field,
            form,
            `${update.what} PATCH ← ${form.what} (${JSON.stringify(form.url)})`
          )
        }
        const after = yield* TestServer.expectOk(yield* request("GET", path), 200, Resource)
        assert.strictEqual(update.read(after), update.read(before), update.what)
        assert.strictEqual(after["configVersion"], before["configVersion"], update.what)
      }
    }))
})

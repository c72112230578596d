/**
 * OpenAPI documents whose `$ref`s fan out (each schema refers to the next one
 * ten times): a few kilobytes that expand past any memory. Registered inline,
 * such a document is 400 naming `spec` (unless allowedOperations leaves the
 * operation out); served by URL, the `test` route answers 502 saying why and a
 * run gets `data-svc-http-connection-unavailable` with `spec_invalid` and
 * completes, while another organization is served. A fan-out within the
 * budget is offered expanded, as any document.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { SchemaLimits } from "../../src/tools/SchemaBudget.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, dataOf, getRun, send, textOf } from "../support/Conversation.ts"
import { expectInvalid } from "../support/Refusals.ts"
import { fanOutDocument } from "../support/SchemaBombs.ts"
import * as SpecServer from "../support/SpecServer.ts"
import * as TestServer from "../support/TestServer.ts"

const { create, post } = Collection.httpConnections

const decodeTools = Schema.decodeUnknownSync(
  Schema.fromJsonString(Schema.Array(Schema.Struct({ name: Schema.String, inputSchema: Schema.Unknown })))
)

const tooLarge =
  `the input schema of operation 'bomb' is larger than ${SchemaLimits.maxToolSchemaBytes} bytes once its $refs are expanded (allowedOperations can leave it out)`

TestServer.suite()("OpenAPI schema bounds", (it) => {
  it.effect("an inline document whose $refs fan out eight levels is 400 naming spec; leaving the operation out registers it", () =>
    Effect.gen(function*() {
      const bomb = fanOutDocument(8)
      assert.isBelow(bomb.length, 4_096)
      const refused = yield* expectInvalid(yield* post({ name: "bomb", spec: bomb }), "spec")
      assert.strictEqual(refused.message, `spec: ${tooLarge}.`)
      // The same document with the operation left out, then a PATCH that exposes it again.
      const narrowed = yield* create({ name: "bomb", spec: bomb, allowedOperations: ["other"] })
      const widened = yield* Collection.httpConnections.patch(narrowed.id, { allowedOperations: ["bomb"] })
      const again = yield* expectInvalid(widened, "spec")
      assert.strictEqual(again.message, `spec: ${tooLarge}.`)
      // Within the budget, a fan-out is a document like any other.
      yield* create({ name: "small-fan", spec: fanOutDocument(2) })
    }))

  it.effect("served by URL: the test route is 502 saying why, a run gets spec_invalid and completes; another organization is served", () =>
    Effect.gen(function*() {
      const served = yield* SpecServer.serve({
        "/bomb.json": { body: fanOutDocument(8, 10, []) },
        "/small.json": { body: fanOutDocument(2, 2, []) }
      })
      const connection = yield* create({ name: "url-bomb", spec: `${served.origin}/bomb.json`, baseUrl: served.origin })
      const test = yield* Collection.httpConnections.action(connection.id, "test")
      const failed = yield* TestServer.expectError(test, 502, "api_error", "service_unavailable")
      assert.strictEqual(failed.message, `HTTP connection test failed: ${tooLarge}.`)

      const small = yield* create({
        name: "url-small",
        spec: `${served.origin}/small.json`,
        baseUrl: served.origin,
        defer: false
      })
      const { thread } = yield* agentWithThread({
        capabilities: { http: { connectionIds: [connection.id, small.id] } }
      })
      const { parsed, runId } = yield* send(thread.id, "/show-tools")
      assert.deepStrictEqual(dataOf(parsed.chunks, "data-svc-http-connection-unavailable"), [{
        connectionId: connection.id,
        name: "url-bomb",
        errorCode: "spec_invalid",
        message: `The document cannot be used: ${tooLarge}.`
      }])
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      const other = yield* TestServer.request("GET", "/v1/agents", { key: TestServer.Keys.c })
      assert.strictEqual(other.status, 200)
      // The small fan-out is offered expanded: the body holds two L1 objects, each of two L2 strings.
      const leaf = { type: "string" }
      const level1 = { type: "object", properties: { p0: leaf, p1: leaf } }
      assert.deepStrictEqual(decodeTools(textOf(parsed.message)), [{
        name: "api__url-small__bomb",
        inputSchema: {
          type: "object",
          properties: { body: { type: "object", properties: { p0: level1, p1: level1 } } },
          required: ["body"]
        }
      }])
    }).pipe(Effect.scoped))
})

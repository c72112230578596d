/**
 * The error envelope (spec 7): every failure, whether raised by an endpoint
 * or by the router before any endpoint runs, answers
 * `{ error: { type, code, message, request_id, details? } }` with request_id
 * equal to X-Request-Id. Also the unauthenticated documentation routes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { Agent } from "../../domain/Agent.ts"
import * as RouterMiddleware from "../../http/RouterMiddleware.ts"
import { IdGenerator } from "../../src/IdGenerator.ts"
import * as Collection from "../support/Collection.ts"
import { expectNotFound } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

const RequestIdShape = TestServer.requestIdShape

const FieldError = Schema.Struct({ field: Schema.String, location: Schema.String, message: Schema.String })
const FieldErrors = Schema.Struct({ errors: Schema.Array(FieldError) })
type FieldError = typeof FieldError.Type

/** Asserts a 400 invalid_request_error whose `details.errors` names (at least) each given field, at the given location. */
const expectFieldErrors = (
  reply: TestServer.Reply,
  location: string,
  fields: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<FieldError>> =>
  Effect.gen(function*() {
    const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", "invalid_request_error")
    const details = yield* Schema.decodeUnknownEffect(FieldErrors)(error.details).pipe(
      Effect.mapError((e) => new Error(`details.errors missing or malformed: ${reply.text}\n${e.message}`)),
      Effect.orDie
    )
    assert.isAbove(details.errors.length, 0, reply.text)
    const named = details.errors.map((e) => e.field)
    for (const field of fields) {
      assert.include(named, field, `details.errors should name '${field}': ${reply.text}`)
    }
    for (const e of details.errors) {
      assert.isNotEmpty(e.message, reply.text)
      if (fields.includes(e.field)) assert.strictEqual(e.location, location, reply.text)
    }
    return details.errors
  })

/** Fetches a path directly (for non-JSON answers the client helper cannot parse). */
const rawGet = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

TestServer.suite()("error envelope", (it) => {
  it.effect("malformed JSON bodies are 400 invalid_request_error", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* Collection.agents.create({ context: "x" })
      const json = { "content-type": "application/json" }
      const cases: ReadonlyArray<readonly [string, string, string]> = [
        ["POST", "/v1/agents", "{not json"],
        ["POST", "/v1/agents", "{\"context\": \"x\""],
        ["POST", "/v1/agents/validate", "[1, 2,"],
        ["PATCH", `/v1/agents/${agent.id}`, "{'context': 'single quotes'}"],
        ["POST", "/v1/threads", "{\"agentId\": }"]
      ]
      for (const [method, path, rawBody] of cases) {
        const reply = yield* api.request(method, path, { rawBody, headers: json })
        assert.strictEqual(reply.status, 400, `${method} ${path} ${rawBody}: ${reply.text}`)
        const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", "invalid_request_error")
        assert.isNotEmpty(error.message)
      }
      // Nothing was changed by the rejected PATCH.
      const read = yield* TestServer.expectOk(yield* api.request("GET", `/v1/agents/${agent.id}`), 200, Agent)
      assert.deepStrictEqual(read, agent)
    }))

  it.effect("a body of the wrong type names the field", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      yield* expectFieldErrors(yield* api.request("POST", "/v1/agents", { body: { band: 5 } }), "body", ["band"])
      yield* expectFieldErrors(yield* api.request("POST", "/v1/agents/validate", { body: { band: 5 } }), "body", [
        "band"
      ])
      yield* expectFieldErrors(
        yield* api.request("POST", "/v1/agents", { body: { capabilities: { web: "yes" } } }),
        "body",
        [
          "capabilities.web"
        ]
      )
      yield* expectFieldErrors(yield* api.request("POST", "/v1/agents", { body: { metadata: { k: 1 } } }), "body", [
        "metadata.k"
      ])
      const agent = yield* Collection.agents.create()
      yield* expectFieldErrors(yield* api.request("PATCH", `/v1/agents/${agent.id}`, { body: { band: 5 } }), "body", [
        "band"
      ])
      yield* expectFieldErrors(yield* api.request("POST", "/v1/threads", { body: { agentId: 5 } }), "body", ["agentId"])
    }))

  it.effect("a missing required field is named (POST /v1/threads {} names agentId)", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const errors = yield* expectFieldErrors(yield* api.request("POST", "/v1/threads", { body: {} }), "body", [
        "agentId"
      ])
      assert.strictEqual(errors.length, 1, JSON.stringify(errors))
    }))

  it.effect("unknown fields are rejected and named, top-level and nested", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      yield* expectFieldErrors(yield* api.request("POST", "/v1/agents", { body: { nope: 1 } }), "body", ["nope"])
      yield* expectFieldErrors(
        yield* api.request("POST", "/v1/agents", { body: { capabilities: { nope: true } } }),
        "body",
        [
          "capabilities.nope"
        ]
      )
      yield* expectFieldErrors(yield* api.request("POST", "/v1/agents/validate", { body: { nope: 1 } }), "body", [
        "nope"
      ])
      const agent = yield* Collection.agents.create()
      yield* expectFieldErrors(yield* api.request("PATCH", `/v1/agents/${agent.id}`, { body: { nope: 1 } }), "body", [
        "nope"
      ])
      yield* expectFieldErrors(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, nope: 1 } }),
        "body",
        ["nope"]
      )
      // Nothing was created or changed.
      const read = yield* TestServer.expectOk(yield* api.request("GET", `/v1/agents/${agent.id}`), 200, Agent)
      assert.deepStrictEqual(read, agent)
    }))

  it.effect("with several bad fields, all of them are listed", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const body = { band: 5, nope: 1, capabilities: { web: "yes", nope: true }, metadata: "not an object" }
      const expected = ["band", "nope", "capabilities.web", "capabilities.nope", "metadata"]
      const errors = yield* expectFieldErrors(yield* api.request("POST", "/v1/agents", { body }), "body", expected)
      assert.isAtLeast(errors.length, expected.length)
      yield* expectFieldErrors(yield* api.request("POST", "/v1/agents/validate", { body }), "body", expected)
      const agent = yield* Collection.agents.create()
      yield* expectFieldErrors(yield* api.request("PATCH", `/v1/agents/${agent.id}`, { body }), "body", expected)
      yield* expectFieldErrors(
        yield* api.request("POST", "/v1/threads", { body: { agentId: 7, band: "huge", nope: true } }),
        "body",
        ["agentId", "band", "nope"]
      )
    }))

  it.effect("an unknown route is 404 not_found / route_not_found, with or without a key", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      yield* TestServer.expectError(yield* api.request("GET", "/v1/nothing"), 404, "not_found", "route_not_found")
      yield* TestServer.expectError(
        yield* api.request("GET", "/v1/nothing", { key: null }),
        404,
        "not_found",
        "route_not_found"
      )
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/nothing/deeper", { body: {} }),
        404,
        "not_found",
        "route_not_found"
      )
      yield* TestServer.expectError(yield* api.request("GET", "/v2/agents"), 404, "not_found", "route_not_found")
    }))

  it.effect.each([
    { path: "/v1/agents/agent_doesnotexist", code: "agent_not_found" },
    { path: "/v1/threads/thread_doesnotexist", code: "thread_not_found" }
  ])("a missing resource is 404 not_found with its own code: $code", ({ code, path }) =>
    Effect.gen(function*() {
      yield* expectNotFound(yield* TestServer.request("GET", path), code)
    }))

  it.effect("a wrong method on a known path is 405 method_not_allowed with Allow", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* Collection.agents.create()
      const allowOf = (reply: TestServer.Reply) =>
        (reply.headers.get("allow") ?? "").split(",").map((m) => m.trim()).filter((m) => m !== "").sort()

      const put = yield* api.request("PUT", "/v1/agents", { body: {} })
      yield* TestServer.expectError(put, 405, "invalid_request_error", "method_not_allowed")
      assert.deepStrictEqual(allowOf(put), ["GET", "POST"])

      const post = yield* api.request("POST", `/v1/agents/${agent.id}`, { body: {} })
      yield* TestServer.expectError(post, 405, "invalid_request_error", "method_not_allowed")
      assert.deepStrictEqual(allowOf(post), ["DELETE", "GET", "PATCH"])

      const del = yield* api.request("DELETE", "/v1/threads")
      yield* TestServer.expectError(del, 405, "invalid_request_error", "method_not_allowed")
      assert.deepStrictEqual(allowOf(del), ["GET", "POST"])

      const putThread = yield* api.request("PUT", "/v1/threads/thread_x", { body: {} })
      yield* TestServer.expectError(putThread, 405, "invalid_request_error", "method_not_allowed")
      assert.deepStrictEqual(allowOf(putThread), ["DELETE", "GET", "PATCH"])

      const postBands = yield* api.request("POST", "/v1/bands", { body: {} })
      yield* TestServer.expectError(postBands, 405, "invalid_request_error", "method_not_allowed")
      assert.deepStrictEqual(allowOf(postBands), ["GET"])

      // The rejected POST did not touch the agent.
      const read = yield* TestServer.expectOk(yield* api.request("GET", `/v1/agents/${agent.id}`), 200, Agent)
      assert.deepStrictEqual(read, agent)
    }))

  it.effect("an unsupported content type is 415 unsupported_media_type", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const before = yield* TestServer.expectOk(
        yield* api.request("GET", "/v1/agents?limit=100"),
        200,
        Schema.Struct({ data: Schema.Array(Agent) })
      )
      const reply = yield* api.request("POST", "/v1/agents", {
        rawBody: JSON.stringify({ context: "plain" }),
        headers: { "content-type": "text/plain" }
      })
      yield* TestServer.expectError(reply, 415, "invalid_request_error", "unsupported_media_type")
      const form = yield* api.request("POST", "/v1/threads", {
        rawBody: "agentId=agent_x",
        headers: { "content-type": "application/x-www-form-urlencoded" }
      })
      yield* TestServer.expectError(form, 415, "invalid_request_error", "unsupported_media_type")
      const after = yield* TestServer.expectOk(
        yield* api.request("GET", "/v1/agents?limit=100"),
        200,
        Schema.Struct({ data: Schema.Array(Agent) })
      )
      assert.strictEqual(after.data.length, before.data.length, "no agent was created")
    }))

  it.effect("a body over the cap (65,536 bytes) is 413 request_too_large", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const rawBody = JSON.stringify({ context: "x".repeat(100_000) })
      assert.isAbove(rawBody.length, 65_536)
      const reply = yield* api.request("POST", "/v1/agents", {
        rawBody,
        headers: { "content-type": "application/json" }
      })
      yield* TestServer.expectError(reply, 413, "invalid_request_error", "request_too_large")
      const validate = yield* api.request("POST", "/v1/agents/validate", {
        rawBody,
        headers: { "content-type": "application/json" }
      })
      yield* TestServer.expectError(validate, 413, "invalid_request_error", "request_too_large")
      // Just under the cap is read (and then judged on its merits, not its size).
      const under = JSON.stringify({ metadata: { k: "y".repeat(400) } })
      const ok = yield* api.request("POST", "/v1/agents/validate", {
        rawBody: under,
        headers: { "content-type": "application/json" }
      })
      assert.strictEqual(ok.status, 200, ok.text)
    }))

  it.effect("a body over the cap sent without Content-Length (chunked) is 413 request_too_large", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const chunk = new TextEncoder().encode(`{"context":"${"x".repeat(10_000)}`)
      const reply = yield* Effect.promise(async () => {
        let sent = 0
        const stream = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= 10) {
              controller.enqueue(new TextEncoder().encode(`"}`))
              controller.close()
              return
            }
            controller.enqueue(sent === 0 ? chunk : new TextEncoder().encode("x".repeat(10_000)))
            sent++
          }
        })
        const response = await fetch(`${api.url}/v1/agents`, {
          method: "POST",
          headers: { authorization: `Bearer ${TestServer.Keys.a}`, "content-type": "application/json" },
          body: stream,
          duplex: "half"
        })
        const text = await response.text()
        return { status: response.status, headers: response.headers, text, json: TestServer.parseJson(text) }
      })
      yield* TestServer.expectError(reply, 413, "invalid_request_error", "request_too_large")
    }))

  it.effect("bad query parameters are 400 naming the parameter", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      for (const limit of ["0", "101", "abc", "-1", "1.5", ""]) {
        const reply = yield* api.request("GET", `/v1/agents?limit=${limit}`)
        assert.strictEqual(reply.status, 400, `limit=${limit}: ${reply.text}`)
        yield* expectFieldErrors(reply, "query", ["limit"])
      }
      const agent = yield* Collection.agents.create()
      yield* expectFieldErrors(yield* api.request("GET", `/v1/threads?agentId=${agent.id}&limit=101`), "query", [
        "limit"
      ])
      yield* expectFieldErrors(yield* api.request("GET", "/v1/threads"), "query", ["agentId"])
      // In range is fine.
      for (const limit of ["1", "100"]) {
        const reply = yield* api.request("GET", `/v1/agents?limit=${limit}`)
        assert.strictEqual(reply.status, 200, `limit=${limit}: ${reply.text}`)
      }
    }))

  it.effect("request_id equals X-Request-Id on every kind of error", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const replies = [
        yield* api.request("GET", "/v1/agents", { key: null }),
        yield* api.request("GET", "/v1/nothing"),
        yield* api.request("PUT", "/v1/agents"),
        yield* api.request("POST", "/v1/agents", { body: { nope: 1 } }),
        yield* api.request("POST", "/v1/agents", { rawBody: "{", headers: { "content-type": "application/json" } }),
        yield* api.request("GET", "/v1/agents/agent_missing")
      ]
      const ids = new Set<string>()
      for (const reply of replies) {
        const id = reply.headers.get("x-request-id") ?? ""
        assert.match(id, RequestIdShape, reply.text)
        const body = yield* Schema.decodeUnknownEffect(
          Schema.Struct({ error: Schema.Struct({ request_id: Schema.String }) })
        )(reply.json).pipe(
          Effect.orDie
        )
        assert.strictEqual(body.error.request_id, id)
        ids.add(id)
      }
      assert.strictEqual(ids.size, replies.length)
    }))
})

TestServer.suite()("documentation routes", (it) => {
  it.effect("GET /v1/openapi.json is the OpenAPI document, without auth", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const reply = yield* api.request("GET", "/v1/openapi.json", { key: null })
      assert.strictEqual(reply.status, 200, reply.text.slice(0, 300))
      assert.match(reply.headers.get("content-type") ?? "", /^application\/json/)
      assert.match(reply.headers.get("x-request-id") ?? "", RequestIdShape)
      const doc = yield* Schema.decodeUnknownEffect(
        Schema.Struct({ openapi: Schema.String, paths: Schema.Record(Schema.String, Schema.Unknown) })
      )(reply.json).pipe(Effect.orDie)
      assert.match(doc.openapi, /^3\./)
      const paths = Object.keys(doc.paths)
      for (
        const path of [
          "/v1/agents",
          "/v1/agents/validate",
          "/v1/agents/{id}",
          "/v1/threads",
          "/v1/threads/{id}",
          "/v1/bands"
        ]
      ) {
        assert.include(paths, path, `paths: ${paths.join(", ")}`)
      }
      assert.notInclude(paths, "/v1/threads/:id", "path parameters are rendered as {id}")
    }))

  it.effect("GET /docs is an HTML page, without auth", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const reply = yield* rawGet(`${api.url}/docs`)
      assert.strictEqual(reply.status, 200)
      assert.match(reply.headers.get("content-type") ?? "", /^text\/html/)
      assert.match(reply.text, /<html/i)
      assert.match(reply.headers.get("x-request-id") ?? "", RequestIdShape)
    }))

  it.effect("GET /healthz is 200 { status: 'ok' }, without auth", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const reply = yield* api.request("GET", "/healthz", { key: null })
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(reply.json, { status: "ok" })
      assert.match(reply.headers.get("x-request-id") ?? "", RequestIdShape)
    }))
})

// ---- defects: the router middleware on its own -------------------------------

const Incident = Schema.Struct({
  error: Schema.Struct({
    type: Schema.Literal("api_error"),
    code: Schema.Literal("internal_error"),
    message: Schema.String,
    request_id: Schema.String,
    reference: Schema.String,
    details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
  })
})
const decodeIncident = (text: string) =>
  Schema.decodeUnknownEffect(Schema.fromJsonString(Incident))(text).pipe(
    Effect.mapError((e) => new Error(`not an incident envelope: ${text}\n${e.message}`)),
    Effect.orDie
  )

const RouteEnvelope = Schema.fromJsonString(Schema.Struct({
  error: Schema.Struct({ type: Schema.String, code: Schema.String, message: Schema.String, request_id: Schema.String })
}))

/** A stack frame as V8 prints it: "at fn (file:line:col)" or "at file:line:col". */
const StackFrame = /\bat\s+(?:\S+\s+\()?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+/

const routeTable: RouterMiddleware.RouteTable = { groups: {} }

/** A one-route app whose route dies, behind the real router middleware; log lines are captured, not printed. */
const defectApp = Effect.acquireRelease(
  Effect.sync(() => {
    const logged: Array<string> = []
    const app = Layer.mergeAll(
      HttpRouter.add("GET", "/boom", Effect.die(new Error("secret SQL: SELECT 1"))),
      RouterMiddleware.layer(routeTable, { maxBodyBytes: 1000, extraRoutes: [["GET", "/boom"]] }).pipe(
        Layer.provide(IdGenerator.layer)
      ),
      Logger.layer([Logger.make((options) => {
        logged.push(`${options.logLevel} ${String(options.message)}`)
      })])
    )
    const { handler, dispose } = HttpRouter.toWebHandler(app, { disableLogger: true })
    const call = (path: string, init?: RequestInit) =>
      Effect.promise(async () => {
        const response = await handler(new Request(`http://localhost${path}`, init))
        return { status: response.status, headers: response.headers, text: await response.text() }
      })
    return { call, logged, dispose }
  }),
  ({ dispose }) => Effect.promise(dispose)
)

describe("defects", () => {
  it.effect("a defect becomes 500 api_error / internal_error with an inc_ reference and no internals", () =>
    Effect.scoped(Effect.gen(function*() {
      const { call, logged } = yield* defectApp
      const reply = yield* call("/boom")
      assert.strictEqual(reply.status, 500, reply.text)
      assert.match(reply.headers.get("content-type") ?? "", /^application\/json/)
      const body = yield* decodeIncident(reply.text)
      const requestId = reply.headers.get("x-request-id")
      assert.isNotNull(requestId)
      assert.match(requestId ?? "", RequestIdShape)
      assert.strictEqual(body.error.request_id, requestId)
      assert.match(body.error.reference, /^inc_[0-9A-Za-z]{22}$/)
      assert.notStrictEqual(body.error.reference, requestId)
      assert.isNotEmpty(body.error.message)
      // Nothing of the defect reaches the client.
      assert.notInclude(reply.text, "SELECT")
      assert.notInclude(reply.text, "secret")
      assert.notInclude(reply.text, "Error:")
      assert.notInclude(reply.text, "    at ")
      assert.notMatch(reply.text, StackFrame)
      // The incident is recorded server-side.
      assert.isAbove(logged.length, 0, "the defect is logged")

      // A second defect gets its own request id and its own reference.
      const again = yield* call("/boom")
      const againBody = yield* decodeIncident(again.text)
      assert.notStrictEqual(againBody.error.reference, body.error.reference)
      assert.notStrictEqual(again.headers.get("x-request-id"), requestId)
    })))

  it.effect("the incident reference is its own field, never embedded in message (spec 7)", () =>
    Effect.scoped(Effect.gen(function*() {
      const { call } = yield* defectApp
      const body = yield* decodeIncident((yield* call("/boom")).text)
      assert.notInclude(body.error.message, body.error.reference, "the reference must not be embedded in message")
      assert.notInclude(body.error.message, "inc_")
    })))

  it.effect("the same app answers unknown routes and wrong methods with the envelope", () =>
    Effect.scoped(Effect.gen(function*() {
      const { call } = yield* defectApp
      const missing = yield* call("/nope")
      assert.strictEqual(missing.status, 404, missing.text)
      const missingBody = yield* Schema.decodeUnknownEffect(RouteEnvelope)(missing.text).pipe(Effect.orDie)
      assert.strictEqual(missingBody.error.type, "not_found")
      assert.strictEqual(missingBody.error.code, "route_not_found")
      assert.match(missing.headers.get("x-request-id") ?? "", RequestIdShape)
      assert.strictEqual(missingBody.error.request_id, missing.headers.get("x-request-id"))

      const post = yield* call("/boom", { method: "POST" })
      assert.strictEqual(post.status, 405, post.text)
      const postBody = yield* Schema.decodeUnknownEffect(RouteEnvelope)(post.text).pipe(Effect.orDie)
      assert.strictEqual(postBody.error.type, "invalid_request_error")
      assert.strictEqual(postBody.error.code, "method_not_allowed")
      assert.strictEqual(post.headers.get("allow"), "GET")
    })))
})

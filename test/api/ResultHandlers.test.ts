/**
 * Result handlers (spec 4.5, 7): registration with its own error codes for
 * kind and secret, reads, updates, secret rotation, deletion guarded by agent
 * references, and isolation.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Deleted, Page } from "../../domain/Page.ts"
import { ResultHandler } from "../../domain/ResultHandler.ts"
import * as Collection from "../support/Collection.ts"
import {
  byOtherTenants,
  call,
  expectDenied,
  expectInvalid,
  expectNotFound,
  resourceRoutes
} from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

// ---- helpers ----------------------------------------------------------------

const { nowIso, request } = TestServer

const handlersPath = Collection.resultHandlers.path
const HandlerPage = Page(ResultHandler)

/** Registration never connects to the URL, so any loopback port does (private URLs are allowed here). */
const handlerUrl = "http://127.0.0.1:9/artifacts"

const handlerBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  kind: "artifact",
  name: "archive",
  url: handlerUrl,
  secret: "rh_secret_first",
  ...overrides
})

const without = (body: Record<string, unknown>, key: string): Record<string, unknown> =>
  Object.fromEntries(Object.entries(body).filter(([k]) => k !== key))

const createHandler = (overrides: Record<string, unknown> = {}, key?: string) =>
  Collection.resultHandlers.create(handlerBody(overrides), key)

const assertNoSecret = (reply: TestServer.Reply, ...secrets: ReadonlyArray<string>) => {
  for (const secret of secrets) assert.notInclude(reply.text, secret, reply.text)
  assert.notInclude(reply.text, "\"secret\"", reply.text)
}

const countAll = Effect.map(
  Effect.flatMap(request("GET", `${handlersPath}?limit=100`), (reply) => TestServer.expectOk(reply, 200, HandlerPage)),
  (page) => page.data.length
)

const inUseBy = (error: { readonly details?: Readonly<Record<string, unknown>> | undefined }) =>
  Schema.decodeUnknownEffect(Schema.Array(Schema.String))(error.details?.["inUseByAgentIds"]).pipe(Effect.orDie)

/** Every route that addresses a handler by id. */
const routes = resourceRoutes(handlersPath, { name: "renamed" }, [["rotate-secret", { secret: "rh_rotated" }]])

// ---- the routes on one shared server ----------------------------------------

TestServer.suite()("result handlers", (it) => {
  it.effect("POST answers 200 with defaults resolved and never returns the secret", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 second")
      const now = yield* nowIso
      const reply = yield* request("POST", handlersPath, { body: handlerBody() })
      const handler = yield* TestServer.expectOk(reply, 200, ResultHandler)
      assert.match(handler.id, /^rh_[0-9A-Za-z]+$/)
      assert.deepStrictEqual(reply.json, {
        id: handler.id,
        object: "result_handler",
        kind: "artifact",
        name: "archive",
        url: handlerUrl,
        requestTimeoutMs: 30_000,
        metadata: {},
        configVersion: 1,
        createdAt: now,
        updatedAt: now
      })
      assertNoSecret(reply, "rh_secret_first")
      const read = yield* request("GET", `${handlersPath}/${handler.id}`)
      assert.strictEqual(read.status, 200)
      assert.deepStrictEqual(read.json, reply.json)
      assertNoSecret(read, "rh_secret_first")
    }))

  it.effect("POST echoes every field it is given", () =>
    Effect.gen(function*() {
      const reply = yield* request("POST", handlersPath, {
        body: handlerBody({ name: "drive", requestTimeoutMs: 45_000, metadata: { dest: "drive", env: "prod" } })
      })
      const handler = yield* TestServer.expectOk(reply, 200, ResultHandler)
      assert.deepStrictEqual(reply.json, {
        id: handler.id,
        object: "result_handler",
        kind: "artifact",
        name: "drive",
        url: handlerUrl,
        requestTimeoutMs: 45_000,
        metadata: { dest: "drive", env: "prod" },
        configVersion: 1,
        createdAt: handler.createdAt,
        updatedAt: handler.createdAt
      })
    }))

  it.effect("requestTimeoutMs defaults to 30000, accepts up to 300000, and null means the default", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* createHandler({ requestTimeoutMs: 300_000 })).requestTimeoutMs, 300_000)
      assert.strictEqual((yield* createHandler({ requestTimeoutMs: null })).requestTimeoutMs, 30_000)
      assert.strictEqual((yield* createHandler({ requestTimeoutMs: 1 })).requestTimeoutMs, 1)
      yield* expectInvalid(
        yield* request("POST", handlersPath, { body: handlerBody({ requestTimeoutMs: 300_001 }) }),
        "requestTimeoutMs"
      )
      const handler = yield* createHandler({ requestTimeoutMs: 1_000 })
      yield* expectInvalid(
        yield* request("PATCH", `${handlersPath}/${handler.id}`, { body: { requestTimeoutMs: 300_001 } }),
        "requestTimeoutMs"
      )
      const reset = yield* request("PATCH", `${handlersPath}/${handler.id}`, { body: { requestTimeoutMs: null } })
      assert.strictEqual((yield* TestServer.expectOk(reset, 200, ResultHandler)).requestTimeoutMs, 30_000)
    }))

  it.effect("a missing kind or a kind other than 'artifact' is 400 result_handler_invalid_kind", () =>
    Effect.gen(function*() {
      const before = yield* countAll
      yield* expectInvalid(
        yield* request("POST", handlersPath, { body: without(handlerBody(), "kind") }),
        "kind",
        "result_handler_invalid_kind"
      )
      for (const kind of ["webhook", "Artifact", "", null, 1]) {
        yield* expectInvalid(
          yield* request("POST", handlersPath, { body: handlerBody({ kind }) }),
          "kind",
          "result_handler_invalid_kind"
        )
      }
      assert.strictEqual(yield* countAll, before, "nothing was registered")
    }))

  it.effect("a missing or empty secret is 400 result_handler_secret_missing", () =>
    Effect.gen(function*() {
      const before = yield* countAll
      yield* expectInvalid(
        yield* request("POST", handlersPath, { body: without(handlerBody(), "secret") }),
        "secret",
        "result_handler_secret_missing"
      )
      yield* expectInvalid(
        yield* request("POST", handlersPath, { body: handlerBody({ secret: "" }) }),
        "secret",
        "result_handler_secret_missing"
      )
      assert.strictEqual(yield* countAll, before, "nothing was registered")
    }))

  it.effect("with private URLs allowed (the test configuration) a loopback http URL registers; a non-URL does not", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* createHandler({ url: "http://localhost:4000/a" })).url, "http://localhost:4000/a")
      yield* expectInvalid(
        yield* request("POST", handlersPath, { body: handlerBody({ url: "not a url" }) }),
        "url",
        "url_not_allowed"
      )
    }))

  it.effect("GET lists the workspace's handlers in pages", () =>
    Effect.gen(function*() {
      const key = TestServer.Keys.c
      const created = [
        yield* createHandler({ name: "a" }, key),
        yield* createHandler({ name: "b" }, key),
        yield* createHandler({ name: "c" }, key)
      ]
      const first = yield* TestServer.expectOk(
        yield* request("GET", `${handlersPath}?limit=2`, { key }),
        200,
        HandlerPage
      )
      assert.strictEqual(first.object, "list")
      assert.strictEqual(first.limit, 2)
      assert.strictEqual(first.data.length, 2)
      assert.isTrue(first.hasMore)
      assert.isString(first.nextCursor)
      const second = yield* TestServer.expectOk(
        yield* request("GET", `${handlersPath}?limit=2&cursor=${encodeURIComponent(first.nextCursor ?? "")}`, { key }),
        200,
        HandlerPage
      )
      assert.strictEqual(second.data.length, 1)
      assert.isFalse(second.hasMore)
      assert.isNull(second.nextCursor)
      const all = [...first.data, ...second.data]
      assert.sameMembers(all.map((h) => h.id), created.map((h) => h.id))
      assert.deepStrictEqual(all.find((h) => h.id === created[1].id), created[1])
      assertNoSecret(yield* request("GET", handlersPath, { key }), "rh_secret_first")
    }))

  it.effect("PATCH updates name, url, timeout and metadata, bumping configVersion on structural changes", () =>
    Effect.gen(function*() {
      const handler = yield* createHandler({ metadata: { a: "1", b: "2" } })
      yield* TestClock.adjust("2 seconds")
      const now = yield* nowIso
      const reply = yield* request("PATCH", `${handlersPath}/${handler.id}`, {
        body: {
          name: "renamed",
          url: "http://127.0.0.1:10/v2",
          requestTimeoutMs: 60_000,
          metadata: { a: null, c: "3" }
        }
      })
      const patched = yield* TestServer.expectOk(reply, 200, ResultHandler)
      assert.deepStrictEqual(reply.json, {
        id: handler.id,
        object: "result_handler",
        kind: "artifact",
        name: "renamed",
        url: "http://127.0.0.1:10/v2",
        requestTimeoutMs: 60_000,
        metadata: { b: "2", c: "3" },
        configVersion: handler.configVersion + 1,
        createdAt: handler.createdAt,
        updatedAt: now
      })
      assertNoSecret(reply, "rh_secret_first")
      assert.deepStrictEqual((yield* request("GET", `${handlersPath}/${handler.id}`)).json, reply.json)

      const empty = yield* TestServer.expectOk(
        yield* request("PATCH", `${handlersPath}/${handler.id}`, { body: {} }),
        200,
        ResultHandler
      )
      assert.strictEqual(empty.configVersion, patched.configVersion)
      assert.strictEqual(empty.url, patched.url)

      const moved = yield* TestServer.expectOk(
        yield* request("PATCH", `${handlersPath}/${handler.id}`, { body: { url: "http://127.0.0.1:11/v3" } }),
        200,
        ResultHandler
      )
      assert.strictEqual(moved.configVersion, patched.configVersion + 1)
      assert.strictEqual(moved.name, "renamed")
      assert.strictEqual(moved.requestTimeoutMs, 60_000)

      yield* expectInvalid(
        yield* request("PATCH", `${handlersPath}/${handler.id}`, { body: { url: "not a url" } }),
        "url",
        "url_not_allowed"
      )
    }))

  it.effect("rotate-secret bumps configVersion and never returns the secret; a missing secret is result_handler_secret_missing", () =>
    Effect.gen(function*() {
      const handler = yield* createHandler({ secret: "rh_old" })
      yield* TestClock.adjust("3 seconds")
      const now = yield* nowIso
      const reply = yield* request("POST", `${handlersPath}/${handler.id}/rotate-secret`, {
        body: { secret: "rh_new" }
      })
      const rotated = yield* TestServer.expectOk(reply, 200, ResultHandler)
      assert.deepStrictEqual(reply.json, { ...handler, configVersion: handler.configVersion + 1, updatedAt: now })
      assertNoSecret(reply, "rh_old", "rh_new")
      assert.deepStrictEqual((yield* request("GET", `${handlersPath}/${handler.id}`)).json, reply.json)

      yield* expectInvalid(
        yield* request("POST", `${handlersPath}/${handler.id}/rotate-secret`, { body: {} }),
        "secret",
        "result_handler_secret_missing"
      )
      yield* expectInvalid(
        yield* request("POST", `${handlersPath}/${handler.id}/rotate-secret`, { body: { secret: "" } }),
        "secret",
        "result_handler_secret_missing"
      )
      const after = yield* TestServer.expectOk(
        yield* request("GET", `${handlersPath}/${handler.id}`),
        200,
        ResultHandler
      )
      assert.strictEqual(after.configVersion, rotated.configVersion, "a refused rotation changes nothing")
    }))

  it.effect("DELETE answers { id, object, deleted } and the handler is gone", () =>
    Effect.gen(function*() {
      const handler = yield* createHandler()
      const reply = yield* request("DELETE", `${handlersPath}/${handler.id}`)
      yield* TestServer.expectOk(reply, 200, Deleted("result_handler"))
      assert.deepStrictEqual(reply.json, { id: handler.id, object: "result_handler", deleted: true })
      yield* TestServer.expectError(
        yield* request("GET", `${handlersPath}/${handler.id}`),
        404,
        "not_found",
        "result_handler_not_found"
      )
      yield* TestServer.expectError(
        yield* request("DELETE", `${handlersPath}/${handler.id}`),
        404,
        "not_found",
        "result_handler_not_found"
      )
    }))

  it.effect("DELETE while an agent references the handler (exports or oversized tool results) is 409 resource_in_use", () =>
    Effect.gen(function*() {
      const handler = yield* createHandler()
      const exporter = yield* Collection.agents.create({ artifacts: { exports: { resultHandlerId: handler.id } } })
      const archiver = yield* Collection.agents.create({
        artifacts: { oversizedToolResults: { resultHandlerId: handler.id } }
      })
      const error = yield* TestServer.expectError(
        yield* request("DELETE", `${handlersPath}/${handler.id}`),
        409,
        "api_error",
        "resource_in_use"
      )
      assert.sameMembers([...(yield* inUseBy(error))], [exporter.id, archiver.id])

      // Only the oversized-tool-results reference left.
      yield* Collection.agents.update(exporter.id, { artifacts: null })
      const second = yield* TestServer.expectError(
        yield* request("DELETE", `${handlersPath}/${handler.id}`),
        409,
        "api_error",
        "resource_in_use"
      )
      assert.deepStrictEqual([...(yield* inUseBy(second))], [archiver.id])
      yield* TestServer.expectOk(yield* request("GET", `${handlersPath}/${handler.id}`), 200, ResultHandler)

      yield* TestServer.expectOk(yield* request("DELETE", `/v1/agents/${archiver.id}`), 200, Deleted("agent"))
      const done = yield* request("DELETE", `${handlersPath}/${handler.id}`)
      assert.deepStrictEqual(done.json, { id: handler.id, object: "result_handler", deleted: true })
    }))

  it.effect.each(routes)("an unknown id is 404 result_handler_not_found: $label", (route) =>
    Effect.gen(function*() {
      yield* expectNotFound(yield* call(route, "rh_doesnotexist0000000000"), "result_handler_not_found")
    }))

  it.effect.each(byOtherTenants(routes))(
    "another workspace's handler is 403 permission_denied and absent from its list: $label",
    ({ route, tenant }) =>
      Effect.gen(function*() {
        const handler = yield* createHandler({ name: "private" })
        yield* expectDenied(yield* call(route, handler.id, tenant.key))
        const page = yield* TestServer.expectOk(
          yield* request("GET", `${handlersPath}?limit=100`, { key: tenant.key }),
          200,
          HandlerPage
        )
        assert.notInclude(page.data.map((h) => h.id), handler.id)
        assert.deepStrictEqual((yield* request("GET", `${handlersPath}/${handler.id}`)).json, handler)
      })
  )
})

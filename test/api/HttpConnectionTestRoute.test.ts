/**
 * The HTTP connection's `test` route (spec 4.7): real OpenAPI 3.0 / 3.1 and
 * Swagger 2.0 documents (@readme/oas-examples), inline and served over HTTP,
 * and hand-built documents for naming edge cases, each mapped to the tools a
 * model would see as api__{connection}__{operation}; a spec URL that fails or
 * never answers is 502, a document without a usable base URL 400.
 */
import { assert } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { HttpConnectionTestResult } from "../../domain/HttpConnection.ts"
import * as Collection from "../support/Collection.ts"
import { testRoute } from "../support/CrudAdapters.ts"
import * as McpServers from "../support/McpServers.ts"
import {
  info,
  noTags,
  op,
  openapi,
  petstore2,
  petstore30,
  petstore31,
  petstoreOperations,
  serverVariables,
  webhooksOnly
} from "../support/OpenApiDocuments.ts"
import { expectInvalid } from "../support/Refusals.ts"
import * as SpecServer from "../support/SpecServer.ts"
import * as TestServer from "../support/TestServer.ts"

const { create, update } = Collection.httpConnections

/** `assertTested` checks the whole answer: connected, a latency, and exactly `names` (in document order). */
const route = testRoute(Collection.httpConnections, HttpConnectionTestResult, (answer) => answer.operationCount, "api")
const { assertTested, test, testOk } = route

/** Registers `spec` under `name` and runs the test route. */
const registerAndTest = (name: string, spec: string, extra: Record<string, unknown> = {}) =>
  Effect.flatMap(create({ name, spec, ...extra }), (connection) => testOk(connection.id))

TestServer.suite()("http connection test route", (it) => {
  it.effect("test: the petstore documents (Swagger 2.0, OpenAPI 3.0 and 3.1) inline map every operation", () =>
    Effect.gen(function*() {
      for (
        const [name, spec] of [["pets-v2", petstore2], ["pets-v30", petstore30], ["pets-v31", petstore31]] as const
      ) {
        assertTested(yield* registerAndTest(name, spec), name, petstoreOperations)
      }
    }))

  it.effect("test: the petstore documents served over HTTP map the same operations", () =>
    Effect.gen(function*() {
      const served = yield* SpecServer.serve({
        "/v2/petstore.json": { body: petstore2 },
        "/v30/petstore.json": { body: petstore30 },
        "/v31/petstore.json": { body: petstore31, contentType: "application/vnd.oai.openapi+json" }
      })
      for (
        const [name, path] of [["srv-v2", "/v2/petstore.json"], ["srv-v30", "/v30/petstore.json"], [
          "srv-v31",
          "/v31/petstore.json"
        ]] as const
      ) {
        assertTested(yield* registerAndTest(name, served.origin + path), name, petstoreOperations)
      }
      assert.deepStrictEqual(served.requested(), ["/v2/petstore.json", "/v30/petstore.json", "/v31/petstore.json"])
    }))

  it.effect("test: allowedOperations filters the mapped operations", () =>
    Effect.gen(function*() {
      const connection = yield* create({
        name: "pets-allowed",
        spec: petstore30,
        allowedOperations: ["getPetById", "addPet", "nope"]
      })
      assertTested(yield* testOk(connection.id), "pets-allowed", ["addPet", "getPetById"])
      yield* update(connection.id, { allowedOperations: ["deleteUser"] })
      assertTested(yield* testOk(connection.id), "pets-allowed", ["deleteUser"])
      yield* update(connection.id, { allowedOperations: [] })
      assertTested(yield* testOk(connection.id), "pets-allowed", [])
    }))

  it.effect("test: operations without operationId fall back to {method}_{path}", () =>
    Effect.gen(function*() {
      const result = yield* registerAndTest("no-tags", noTags)
      assert.strictEqual(result.operationCount, 2)
      assert.deepStrictEqual(
        [...result.tools].sort((a, b) => a.name.localeCompare(b.name)),
        [
          { name: "get_pet_id", namespacedName: "api__no-tags__get_pet_id" },
          { name: "put_pet_id", namespacedName: "api__no-tags__put_pet_id" }
        ]
      )
      assertTested(
        yield* registerAndTest("server-vars", serverVariables),
        "server-vars",
        ["post_global", "post_operation", "put_path", "put_combo"]
      )
      const built = openapi({ "/users": { get: op(), post: op() }, "/health-check": { get: op() } })
      assertTested(yield* registerAndTest("fallback", built), "fallback", [
        "get_users",
        "post_users",
        "get_health-check"
      ])
    }))

  it.effect("test: operationIds are sanitized, collisions get a numeric suffix, names over 64 characters are not exposed", () =>
    Effect.gen(function*() {
      // "api__edge__" is 11 characters: a 53-character operation makes 64 (exposed), 54 makes 65 (not).
      const at64 = "o".repeat(53)
      const at65 = "p".repeat(54)
      const spec = openapi({
        "/a": { get: op("dup"), post: op("dup") },
        "/b": { get: op("dup"), put: op("get pets!") },
        "/c": { get: op("list.items/v2"), post: op(at64), delete: op(at65) }
      })
      const connection = yield* create({ name: "edge", spec })
      assertTested(yield* testOk(connection.id), "edge", ["dup", "dup_2", "dup_3", "get_pets", "list_items_v2", at64])
      // allowedOperations takes the tool's operation name or the document's operationId.
      yield* update(connection.id, { allowedOperations: ["get pets!", "dup_2", at65] })
      assertTested(yield* testOk(connection.id), "edge", ["dup_2", "get_pets"])
    }))

  it.effect("test: a document without operations is connected with operationCount 0", () =>
    Effect.gen(function*() {
      assertTested(yield* registerAndTest("empty", openapi({})), "empty", [])
      const swagger = JSON.stringify({ swagger: "2.0", info, host: "api.example.com", paths: {} })
      assertTested(yield* registerAndTest("empty-v2", swagger), "empty-v2", [])
      assertTested(
        yield* registerAndTest("webhooks-only", webhooksOnly, { baseUrl: "https://93.184.215.14" }),
        "webhooks-only",
        []
      )
    }))

  it.effect("test: a spec URL that answers 404, non-JSON, YAML or another kind of JSON is 502 service_unavailable", () =>
    Effect.gen(function*() {
      const served = yield* SpecServer.serve({
        "/html": { body: "<html><body>docs</body></html>", contentType: "text/html" },
        "/yaml": {
          body: "openapi: 3.0.3\ninfo:\n  title: t\n  version: '1'\npaths: {}\n",
          contentType: "application/yaml"
        },
        "/other-json": { body: JSON.stringify({ kind: "not openapi" }) },
        "/gone": { status: 500, body: JSON.stringify(JSON.parse(petstore30)) }
      })
      const port = yield* TestServer.freePort
      for (
        const [name, url] of [
          ["spec-404", served.origin + "/missing.json"],
          ["spec-html", served.origin + "/html"],
          ["spec-yaml", served.origin + "/yaml"],
          ["spec-other", served.origin + "/other-json"],
          ["spec-500", served.origin + "/gone"],
          ["spec-closed", `http://127.0.0.1:${port}/openapi.json`]
        ] as const
      ) {
        const connection = yield* create({ name, spec: url })
        yield* TestServer.expectError(yield* test(connection.id), 502, "api_error", "service_unavailable")
      }
    }))

  it.effect("test: a spec URL that never answers is 502 service_unavailable once requestTimeoutMs passes", () =>
    Effect.gen(function*() {
      const silent = yield* McpServers.holding
      const connection = yield* create({
        name: "spec-silent",
        spec: silent.origin + "/openapi.json",
        requestTimeoutMs: 5_000
      })
      const fiber = yield* Effect.forkChild(test(connection.id))
      yield* Effect.raceFirst(silent.arrived, Effect.asVoid(Fiber.await(fiber)))
      yield* TestClock.adjust("5 seconds")
      const error = yield* TestServer.expectError(yield* Fiber.join(fiber), 502, "api_error", "service_unavailable")
      assert.include(error.message, silent.origin)
    }))

  it.effect("test: no resolvable base URL is 400 naming baseUrl; an explicit baseUrl or a usable server fixes it", () =>
    Effect.gen(function*() {
      const paths = { "/items": { get: op("listItems") } }
      const noServers = openapi(paths, null)
      const relative = openapi(paths, [{ url: "/api" }])
      const swaggerNoHost = JSON.stringify({ swagger: "2.0", info, basePath: "/api", paths })
      for (
        const [name, spec] of [["base-none", noServers], ["base-relative", relative], [
          "base-v2-nohost",
          swaggerNoHost
        ]] as const
      ) {
        const connection = yield* create({ name, spec })
        const error = yield* expectInvalid(yield* test(connection.id), "baseUrl")
        assert.include(error.message, "baseUrl")
        assert.strictEqual(error.details?.["errorCode"], "base_url_missing")
        // An explicit base URL resolves it.
        yield* update(connection.id, { baseUrl: "https://93.184.215.14/api" })
        assertTested(yield* testOk(connection.id), name, ["listItems"])
      }
      // A loopback servers[] entry is usable here (the test service allows private URLs).
      assertTested(
        yield* registerAndTest("base-loopback", openapi(paths, [{ url: "http://127.0.0.1:8080/api" }])),
        "base-loopback",
        ["listItems"]
      )
      // A relative servers[] entry resolves against the document's URL when the spec is a URL.
      const served = yield* SpecServer.serve({ "/docs/openapi.json": { body: relative } })
      assertTested(
        yield* registerAndTest("base-relative-url", served.origin + "/docs/openapi.json"),
        "base-relative-url",
        ["listItems"]
      )
    }))
})

/**
 * HTTP connections (spec 4.7, 7, 8): registration rules, update semantics,
 * isolation, delete guarded by agent references, and the `test` route on real
 * OpenAPI 3.0 / 3.1 and Swagger 2.0 documents (@readme/oas-examples), inline
 * and served over HTTP, plus hand-built documents for naming edge cases.
 */
import { assert } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { HttpConnection, HttpConnectionTestResult } from "../../domain/HttpConnection.ts"
import { Deleted, Page } from "../../domain/Page.ts"
import * as Collection from "../support/Collection.ts"
import * as McpServers from "../support/McpServers.ts"
import {
  byOtherTenants,
  call,
  expectDenied,
  expectInvalid,
  expectNotFound,
  resourceRoutes
} from "../support/Refusals.ts"
import * as SpecServer from "../support/SpecServer.ts"
import * as TestServer from "../support/TestServer.ts"

// ---- documents ----------------------------------------------------------------

const examples = fileURLToPath(new URL("../../node_modules/@readme/oas-examples/", import.meta.url))
const example = (path: string) => readFileSync(examples + path, "utf8")

const petstore2 = example("2.0/json/petstore.json")
const petstore30 = example("3.0/json/petstore.json")
const petstore31 = example("3.1/json/petstore.json")
const noTags = example("3.0/json/petstore-simple-no-tags.json")
/** No operationIds, and servers[] built from variables. */
const serverVariables = example("3.0/json/server-variables.json")
/** OpenAPI 3.1 with webhooks only: no paths, no servers. */
const webhooksOnly = example("3.1/json/webhooks.json")

/** The operationIds of the petstore documents (all three versions), in document order. */
const petstoreOperations = [
  "updatePet",
  "addPet",
  "findPetsByStatus",
  "findPetsByTags",
  "getPetById",
  "updatePetWithForm",
  "deletePet",
  "uploadFile",
  "getInventory",
  "placeOrder",
  "getOrderById",
  "deleteOrder",
  "createUser",
  "createUsersWithArrayInput",
  "createUsersWithListInput",
  "loginUser",
  "logoutUser",
  "getUserByName",
  "updateUser",
  "deleteUser"
]

const info = { title: "Test API", version: "1.0.0" }
const ok = { "200": { description: "OK" } }

/** An OpenAPI 3.0 document; `servers` omitted when null. */
const openapi = (
  paths: Record<string, Record<string, unknown>>,
  servers: ReadonlyArray<{ readonly url: string }> | null = [{ url: "https://api.example.com/v1" }]
) => JSON.stringify({ openapi: "3.0.3", info, ...(servers === null ? {} : { servers }), paths })

const op = (operationId?: string) => (operationId === undefined ? { responses: ok } : { operationId, responses: ok })

// ---- helpers ----------------------------------------------------------------

const { Keys, nowIso, request } = TestServer
const { post, patch, get, del, create, update } = Collection.httpConnections

const test = (id: string, key?: string) => Collection.httpConnections.action(id, "test", undefined, key)
const testOk = (id: string) =>
  Effect.flatMap(test(id), (reply) => TestServer.expectOk(reply, 200, HttpConnectionTestResult))

/** A small valid inline document. */
const tinySpec = openapi({ "/items": { get: op("listItems") } })
const minimal = (name: string) => ({ name, spec: tinySpec })

const assertTested = (
  result: typeof HttpConnectionTestResult.Type,
  connection: string,
  names: ReadonlyArray<string>
) => {
  assert.strictEqual(result.connected, true)
  assert.isAtLeast(result.latencyMs, 0)
  assert.deepStrictEqual(result.tools, names.map((name) => ({ name, namespacedName: `api__${connection}__${name}` })))
  assert.strictEqual(result.operationCount, names.length)
}

/** Registers `spec` under `name` and runs the test route. */
const registerAndTest = (name: string, spec: string, extra: Record<string, unknown> = {}) =>
  Effect.flatMap(create({ name, spec, ...extra }), (connection) => testOk(connection.id))

const HttpConnectionPage = Page(HttpConnection)

/** Every route that addresses a connection by id. */
const routes = resourceRoutes(Collection.httpConnections.path, { enabled: false }, [["test"]])

const unique = Collection.uniqueName

// ---- the routes on one shared server ----------------------------------------

TestServer.suite()("http connections", (it) => {
  // ---- registration ----------------------------------------------------------

  it.effect("POST answers 200 with every optional field resolved to its default", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 second")
      const now = yield* nowIso
      const spec = JSON.stringify(JSON.parse(petstore30))
      const reply = yield* post({ name: "defaults", spec })
      const connection = yield* TestServer.expectOk(reply, 200, HttpConnection)
      assert.match(connection.id, /^hc_[0-9A-Za-z]+$/)
      assert.deepStrictEqual(reply.json, {
        id: connection.id,
        object: "http_connection",
        name: "defaults",
        spec,
        baseUrl: null,
        allowedOperations: null,
        auth: { type: "none" },
        approval: null,
        gatedTools: null,
        resultCapBytes: 100_000,
        trusted: false,
        defer: null,
        requiredSkills: null,
        enabled: true,
        requestTimeoutMs: 60_000,
        metadata: {},
        configVersion: 1,
        createdAt: now,
        updatedAt: now
      })
      const read = yield* get(connection.id)
      assert.strictEqual(read.status, 200)
      assert.deepStrictEqual(read.json, reply.json)
    }))

  it.effect("POST echoes a full registration with bearer auth and a spec URL", () =>
    Effect.gen(function*() {
      const secret = yield* Collection.secrets.create({ name: "hc-full-token", value: "s3cr3t-value" })
      const body = {
        name: "full",
        spec: "https://93.184.215.14/openapi.json",
        baseUrl: "https://93.184.215.14/api",
        auth: { type: "bearer", secretId: secret.id },
        allowedOperations: ["getPetById", "addPet"],
        approval: "once",
        gatedTools: ["addPet"],
        resultCapBytes: 2_048,
        trusted: true,
        defer: false,
        requiredSkills: "petstore",
        enabled: false,
        requestTimeoutMs: 1_000,
        metadata: { owner: "pets" }
      }
      const connection = yield* create(body)
      assert.deepStrictEqual(
        { ...connection, id: "", createdAt: "", updatedAt: "" },
        { ...body, id: "", object: "http_connection", configVersion: 1, createdAt: "", updatedAt: "" }
      )
      assert.notInclude(JSON.stringify(connection), "s3cr3t-value")
      const other = yield* create({
        ...minimal("full-2"),
        allowedOperations: [],
        defer: true,
        requiredSkills: ["a", "b"],
        requestTimeoutMs: null
      })
      assert.deepStrictEqual(other.allowedOperations, [])
      assert.strictEqual(other.defer, true)
      assert.deepStrictEqual(other.requiredSkills, ["a", "b"])
      assert.strictEqual(other.requestTimeoutMs, 60_000)
    }))

  it.effect("names follow the tool-server slug rule and are unique per organization", () =>
    Effect.gen(function*() {
      for (const name of ["", "x".repeat(57), "a__b", "has space", "dot.name", "ümlaut"]) {
        yield* expectInvalid(yield* post(minimal(name)), "name")
      }
      yield* expectInvalid(yield* post({ spec: tinySpec }), "name")
      for (const name of ["n".repeat(56), "A-b_9", "7"]) {
        assert.strictEqual((yield* create(minimal(name))).name, name)
      }
      const first = yield* create(minimal("hc-shared"))
      const conflict = yield* TestServer.expectError(
        yield* post(minimal("hc-shared")),
        409,
        "api_error",
        "name_conflict"
      )
      assert.strictEqual(conflict.details?.["field"], "name")
      yield* TestServer.expectError(yield* post(minimal("hc-shared"), Keys.b), 409, "api_error", "name_conflict")
      const elsewhere = yield* create(minimal("hc-shared"), Keys.c)
      assert.notStrictEqual(elsewhere.id, first.id)
      // Names of tool servers are another namespace.
      yield* Collection.toolServers.create({ name: "hc-cross", transport: "http", url: "https://93.184.215.14/m" })
      assert.strictEqual((yield* create(minimal("hc-cross"))).name, "hc-cross")

      const second = yield* create(minimal("hc-second"))
      yield* TestServer.expectError(yield* patch(second.id, { name: "hc-shared" }), 409, "api_error", "name_conflict")
      yield* expectInvalid(yield* patch(second.id, { name: "hc__second" }), "name")
      const renamed = yield* update(second.id, { name: "hc-second-renamed" })
      assert.strictEqual(renamed.name, "hc-second-renamed")
      assert.strictEqual(renamed.configVersion, 2)
    }))

  it.effect("spec is a URL or inline JSON of OpenAPI 3.x or Swagger 2.0; YAML and other JSON are 400 on 'spec'", () =>
    Effect.gen(function*() {
      const yaml = "openapi: 3.0.3\ninfo:\n  title: t\n  version: '1'\npaths: {}\n"
      const yamlError = yield* expectInvalid(yield* post({ name: "yaml", spec: yaml }), "spec")
      assert.include(yamlError.message, "YAML")
      const swaggerYaml = yield* expectInvalid(
        yield* post({ name: "yaml2", spec: "swagger: '2.0'\ninfo:\n  title: t\n  version: '1'\npaths: {}\n" }),
        "spec"
      )
      assert.include(swaggerYaml.message, "YAML")
      for (
        const spec of [
          JSON.stringify({ hello: "world" }),
          JSON.stringify({ openapi: "2.0.0", info, paths: {} }),
          JSON.stringify({ openapi: "4.0.0", info, paths: {} }),
          JSON.stringify({ swagger: "1.2", info, paths: {} }),
          JSON.stringify({ swagger: 2, info, paths: {} }),
          JSON.stringify([{ openapi: "3.0.3" }]),
          "{ not json",
          "not a url nor a document",
          ""
        ]
      ) {
        yield* expectInvalid(yield* post({ name: "bad-spec", spec }), "spec")
      }
      yield* expectInvalid(yield* post({ name: "no-spec" }), "spec")
      for (const [name, spec] of [["v2", petstore2], ["v30", petstore30], ["v31", petstore31]] as const) {
        assert.strictEqual((yield* create({ name, spec })).name, name)
      }
      const byUrl = yield* create({ name: "by-url", spec: "http://127.0.0.1:9/openapi.json" })
      assert.strictEqual(byUrl.spec, "http://127.0.0.1:9/openapi.json")
      yield* expectInvalid(yield* patch(byUrl.id, { spec: yaml }), "spec")
      yield* expectInvalid(yield* patch(byUrl.id, { spec: JSON.stringify({ kind: "not openapi" }) }), "spec")
      assert.strictEqual((yield* update(byUrl.id, { spec: petstore31 })).configVersion, 2)
    }))

  it.effect("bearer auth needs a secret of the same workspace and an explicit baseUrl", () =>
    Effect.gen(function*() {
      const own = yield* Collection.secrets.create({ name: "hc-own", value: "v1" })
      const foreign = yield* Collection.secrets.create({ name: "hc-foreign", value: "v2" }, Keys.b)
      const bearer = (secretId: string) => ({ type: "bearer", secretId })
      for (const secretId of ["sec_doesnotexist", foreign.id]) {
        yield* expectInvalid(
          yield* post({ ...minimal("hc-bearer-bad"), baseUrl: "https://api.example.com", auth: bearer(secretId) }),
          "auth.secretId"
        )
      }
      const missing = yield* expectInvalid(
        yield* post({ ...minimal("hc-bearer-nobase"), auth: bearer(own.id) }),
        "baseUrl"
      )
      assert.include(missing.message, "baseUrl")

      const connection = yield* create({
        ...minimal("hc-bearer"),
        baseUrl: "https://93.184.215.14/v1",
        auth: bearer(own.id)
      })
      assert.deepStrictEqual([connection.auth, connection.baseUrl], [bearer(own.id), "https://93.184.215.14/v1"])
      yield* expectInvalid(yield* patch(connection.id, { baseUrl: null }), "baseUrl")
      yield* expectInvalid(yield* patch(connection.id, { auth: bearer(foreign.id) }), "auth.secretId")
      const dropped = yield* update(connection.id, { auth: { type: "none" }, baseUrl: null })
      assert.deepStrictEqual([dropped.auth, dropped.baseUrl], [{ type: "none" }, null])
      yield* expectInvalid(yield* patch(connection.id, { auth: bearer(own.id) }), "baseUrl")
      const again = yield* update(connection.id, { auth: bearer(own.id), baseUrl: "https://93.184.215.14/v2" })
      assert.deepStrictEqual([again.auth, again.baseUrl], [bearer(own.id), "https://93.184.215.14/v2"])
      // With { type: 'none' } the base URL may go.
      const plain = yield* create({ ...minimal("hc-plain"), auth: { type: "none" }, baseUrl: "https://93.184.215.14" })
      assert.strictEqual((yield* update(plain.id, { baseUrl: null })).baseUrl, null)
    }))

  it.effect("approval, gatedTools and the shared policy fields follow the tool-server rules", () =>
    Effect.gen(function*() {
      yield* expectInvalid(yield* post({ ...minimal("hc-approval"), approval: "maybe" }), "approval")
      yield* expectInvalid(yield* post({ ...minimal("hc-gated-alone"), gatedTools: ["addPet"] }), "gatedTools")
      yield* expectInvalid(
        yield* post({ ...minimal("hc-gated-never"), approval: "never", gatedTools: ["addPet"] }),
        "gatedTools"
      )
      yield* expectInvalid(yield* post({ ...minimal("hc-cap"), resultCapBytes: 1_023 }), "resultCapBytes")
      yield* expectInvalid(yield* post({ ...minimal("hc-cap"), resultCapBytes: 10_000_001 }), "resultCapBytes")
      yield* expectInvalid(yield* post({ ...minimal("hc-timeout"), requestTimeoutMs: 600_001 }), "requestTimeoutMs")
      const gated = yield* create({ ...minimal("hc-gated"), approval: "always", gatedTools: ["listItems"] })
      assert.deepStrictEqual([gated.approval, gated.gatedTools], ["always", ["listItems"]])
      yield* expectInvalid(yield* patch(gated.id, { approval: "never" }), "gatedTools")
      yield* expectInvalid(yield* patch(gated.id, { approval: null }), "gatedTools")
      const cleared = yield* update(gated.id, { approval: null, gatedTools: null })
      assert.deepStrictEqual([cleared.approval, cleared.gatedTools], [null, null])
      yield* expectInvalid(yield* patch(gated.id, { gatedTools: ["listItems"] }), "gatedTools")
      const once = yield* update(gated.id, { approval: "once", gatedTools: ["listItems"] })
      assert.deepStrictEqual([once.approval, once.gatedTools], ["once", ["listItems"]])
      yield* expectInvalid(yield* patch(gated.id, { allowedOperations: null }), "allowedOperations")
      yield* expectInvalid(yield* patch(gated.id, { protocolVersion: "2025-11-25" }), "protocolVersion")
    }))

  it.effect("configVersion increments on structural changes, not on metadata-only or no-op updates", () =>
    Effect.gen(function*() {
      const connection = yield* create({ ...minimal("hc-versioned"), metadata: { a: "1" } })
      const meta = yield* update(connection.id, { metadata: { a: null, b: "2" } })
      assert.deepStrictEqual([meta.metadata, meta.configVersion], [{ b: "2" }, 1])
      const noop = yield* update(connection.id, { spec: tinySpec, enabled: true, name: "hc-versioned" })
      assert.strictEqual(noop.configVersion, 1)
      const steps: ReadonlyArray<Record<string, unknown>> = [
        { spec: openapi({ "/other": { get: op("listOther") } }) },
        { baseUrl: "https://93.184.215.14/base" },
        { allowedOperations: ["listOther"] },
        { name: "hc-versioned-2" },
        { enabled: false },
        { trusted: true },
        { approval: "never" },
        { resultCapBytes: 50_000 }
      ]
      let version = 1
      for (const step of steps) {
        version += 1
        assert.strictEqual((yield* update(connection.id, step)).configVersion, version, JSON.stringify(step))
      }
      const final = yield* update(connection.id, { metadata: { c: "3" } })
      assert.strictEqual(final.configVersion, version)
      assert.deepStrictEqual(yield* TestServer.expectOk(yield* get(connection.id), 200, HttpConnection), final)
    }))

  it.effect("list shows the caller's workspace only", () =>
    Effect.gen(function*() {
      const mine = yield* create(minimal("hc-listed-a"))
      const theirs = yield* create(minimal("hc-listed-b"), Keys.b)
      const page = yield* TestServer.expectOk(
        yield* request("GET", "/v1/http-connections?limit=100"),
        200,
        HttpConnectionPage
      )
      assert.isTrue(page.data.some((c) => c.id === mine.id))
      assert.isFalse(page.data.some((c) => c.id === theirs.id))
    }))

  it.effect.each(routes)("an unknown id is 404 http_connection_not_found: $label", (route) =>
    Effect.gen(function*() {
      yield* expectNotFound(yield* call(route, "hc_doesnotexist"), "http_connection_not_found")
    }))

  it.effect.each(byOtherTenants(routes))(
    "another workspace's connection is 403 permission_denied and stays untouched: $label",
    ({ route, tenant }) =>
      Effect.gen(function*() {
        const mine = yield* create(minimal(unique("hc-isolated")))
        yield* expectDenied(yield* call(route, mine.id, tenant.key))
        assert.deepStrictEqual(yield* TestServer.expectOk(yield* get(mine.id), 200, HttpConnection), mine)
      })
  )

  it.effect("DELETE is refused with 409 resource_in_use while an agent references the connection", () =>
    Effect.gen(function*() {
      const connection = yield* create(minimal("hc-deletable"))
      const agent = yield* Collection.agents.create({ capabilities: { http: { connectionIds: [connection.id] } } })
      const inUse = yield* TestServer.expectError(yield* del(connection.id), 409, "api_error", "resource_in_use")
      assert.deepStrictEqual(inUse.details, { inUseByAgentIds: [agent.id] })
      yield* Collection.agents.update(agent.id, { capabilities: {} })
      assert.deepStrictEqual(
        yield* TestServer.expectOk(yield* del(connection.id), 200, Deleted("http_connection")),
        { id: connection.id, object: "http_connection", deleted: true }
      )
      yield* TestServer.expectError(yield* get(connection.id), 404, "not_found", "http_connection_not_found")
    }))

  // ---- the test route --------------------------------------------------------

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

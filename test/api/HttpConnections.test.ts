/**
 * HTTP connections (spec 4.7, 7, 8): the CRUD cases every registered resource
 * shares and the name rules (CrudSuite, CrudAdapters), then the connection's
 * own registration rules (its spec, bearer auth with a base URL, the policy
 * fields). Its `test` route: HttpConnectionTestRoute.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import * as Collection from "../support/Collection.ts"
import { adapterResource, crudNames } from "../support/CrudAdapters.ts"
import { crudSuite } from "../support/CrudSuite.ts"
import { info, op, openapi, petstore2, petstore30, petstore31, tinySpec } from "../support/OpenApiDocuments.ts"
import { expectInvalid } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

// ---- helpers ----------------------------------------------------------------

const { Keys } = TestServer
const { post, patch, create, update } = Collection.httpConnections

const minimal = (name: string) => ({ name, spec: tinySpec })

const httpConnections = adapterResource({
  collection: Collection.httpConnections,
  object: "http_connection",
  idPrefix: "hc",
  minimal,
  defaults: { baseUrl: null, allowedOperations: null },
  offeredBy: (id) => ({ http: { connectionIds: [id] } }),
  update: {
    all: {
      name: "patched",
      spec: openapi({ "/patched": { get: op("listPatched") } }),
      baseUrl: "https://93.184.215.14/patched",
      enabled: false,
      requestTimeoutMs: 2_000
    },
    one: { trusted: true },
    refused: { body: { spec: "{ not json" }, field: "spec" }
  },
  versions: {
    noop: (body) => ({ spec: tinySpec, enabled: true, name: body["name"] }),
    steps: [
      { spec: openapi({ "/other": { get: op("listOther") } }) },
      { baseUrl: "https://93.184.215.14/base" },
      { allowedOperations: ["listOther"] },
      { name: "hc-versioned-2" },
      { enabled: false },
      { trusted: true },
      { approval: "never" },
      { resultCapBytes: 50_000 }
    ]
  }
})

// ---- the routes on one shared server ----------------------------------------

TestServer.suite()("http connections", (it) => {
  crudSuite(it, httpConnections)
  crudNames(it, httpConnections)

  // ---- registration ----------------------------------------------------------

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

  it.effect("a tool server's name is free for a connection: names are unique per kind of adapter", () =>
    Effect.gen(function*() {
      yield* Collection.toolServers.create({ name: "hc-cross", transport: "http", url: "https://93.184.215.14/m" })
      assert.strictEqual((yield* create(minimal("hc-cross"))).name, "hc-cross")
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
})

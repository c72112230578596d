/**
 * Tool servers (spec 4.6, 7, 8): the CRUD cases every registered resource
 * shares and the name rules (CrudSuite, CrudAdapters), then the tool server's
 * own registration rules. Its `test` route: ToolServerTestRoute.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { Deleted } from "../../domain/Page.ts"
import { ToolServer } from "../../domain/ToolServer.ts"
import * as Collection from "../support/Collection.ts"
import { adapterResource, crudNames } from "../support/CrudAdapters.ts"
import { crudSuite } from "../support/CrudSuite.ts"
import { expectInvalid } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

// ---- helpers ----------------------------------------------------------------

const { Keys, request } = TestServer
const { post, patch, get, create, update } = Collection.toolServers

/** A public address; registration does not contact it. */
const remoteUrl = "https://93.184.215.14/mcp"

/** The minimal registration body. */
const minimal = (name: string) => ({ name, transport: "http", url: remoteUrl })

const toolServers = adapterResource({
  collection: Collection.toolServers,
  object: "tool_server",
  idPrefix: "ts",
  minimal,
  defaults: { allowedTools: null, blockedTools: null, protocolVersion: "2025-11-25" },
  offeredBy: (id) => ({ mcp: { toolServerIds: [id] } }),
  update: {
    all: {
      name: "patched",
      transport: "sse",
      url: "https://93.184.215.14/sse",
      enabled: false,
      requestTimeoutMs: 2_000
    },
    one: { trusted: true },
    refused: { body: { transport: "ws" }, field: "transport" }
  },
  versions: {
    noop: (body) => ({ transport: "http", url: remoteUrl, name: body["name"], trusted: false }),
    steps: [
      { url: "https://93.184.215.14/other" },
      { transport: "sse" },
      { name: "versioned-renamed" },
      { enabled: false },
      { trusted: true },
      { defer: false },
      { requiredSkills: "skill" },
      { resultCapBytes: 4_096 },
      { requestTimeoutMs: 5_000 },
      { approval: "always" },
      { blockedTools: ["x"] }
    ]
  }
})

// ---- the routes on one shared server ----------------------------------------

TestServer.suite()("tool servers", (it) => {
  crudSuite(it, toolServers)
  crudNames(it, toolServers)

  // ---- registration ----------------------------------------------------------

  it.effect("POST echoes a full registration, bearer auth included", () =>
    Effect.gen(function*() {
      const secret = yield* Collection.secrets.create({ name: "full-token", value: "t0ken" })
      const body = {
        name: "full",
        transport: "sse",
        url: "https://93.184.215.14/sse",
        auth: { type: "bearer", secretId: secret.id },
        allowedTools: ["search", "fetch"],
        approval: "always",
        gatedTools: ["fetch"],
        resultCapBytes: 1_024,
        protocolVersion: "2025-11-25",
        trusted: true,
        defer: false,
        requiredSkills: ["research", "web"],
        enabled: false,
        requestTimeoutMs: 600_000,
        metadata: { team: "search" }
      }
      const server = yield* create(body)
      assert.deepStrictEqual(
        { ...server, id: "", createdAt: "", updatedAt: "" },
        { ...body, id: "", object: "tool_server", blockedTools: null, configVersion: 1, createdAt: "", updatedAt: "" }
      )
      assert.notInclude(JSON.stringify(server), "t0ken")
      const other = yield* create({
        ...minimal("full-2"),
        blockedTools: [],
        approval: "once",
        gatedTools: [],
        resultCapBytes: 10_000_000,
        defer: true,
        requiredSkills: "research",
        requestTimeoutMs: null
      })
      assert.deepStrictEqual(other.blockedTools, [])
      assert.strictEqual(other.allowedTools, null)
      assert.strictEqual(other.approval, "once")
      assert.deepStrictEqual(other.gatedTools, [])
      assert.strictEqual(other.resultCapBytes, 10_000_000)
      assert.strictEqual(other.defer, true)
      assert.strictEqual(other.requiredSkills, "research")
      assert.strictEqual(other.requestTimeoutMs, 60_000)
    }))

  it.effect("transport is 'http' or 'sse'; name, transport and url are required", () =>
    Effect.gen(function*() {
      for (const transport of ["websocket", "stdio", "HTTP", "streamable-http", 1]) {
        yield* expectInvalid(yield* post({ ...minimal("bad-transport"), transport }), "transport")
      }
      yield* expectInvalid(yield* post({ name: "no-transport", url: remoteUrl }), "transport")
      yield* expectInvalid(yield* post({ name: "no-url", transport: "http" }), "url")
      const sse = yield* create({ ...minimal("sse-transport"), transport: "sse" })
      assert.strictEqual(sse.transport, "sse")
      const switched = yield* update(sse.id, { transport: "http" })
      assert.strictEqual(switched.transport, "http")
      yield* expectInvalid(yield* patch(sse.id, { transport: "ws" }), "transport")
    }))

  it.effect("protocolVersion: only '2025-11-25', and only at registration", () =>
    Effect.gen(function*() {
      for (const protocolVersion of ["2025-06-18", "2024-11-05", "", null]) {
        yield* expectInvalid(yield* post({ ...minimal("bad-protocol"), protocolVersion }), "protocolVersion")
      }
      const server = yield* create({ ...minimal("protocol"), protocolVersion: "2025-11-25" })
      assert.strictEqual(server.protocolVersion, "2025-11-25")
      // Not an update field, even with the one accepted value.
      yield* expectInvalid(yield* patch(server.id, { protocolVersion: "2025-11-25" }), "protocolVersion")
      yield* expectInvalid(yield* patch(server.id, { protocolVersion: "2024-11-05" }), "protocolVersion")
      const unchanged = yield* TestServer.expectOk(yield* get(server.id), 200, ToolServer)
      assert.strictEqual(unchanged.configVersion, 1)
    }))

  it.effect("allowedTools and blockedTools are mutually exclusive; switching clears the old one with null", () =>
    Effect.gen(function*() {
      const both = yield* TestServer.expectError(
        yield* post({ ...minimal("both-lists"), allowedTools: ["a"], blockedTools: ["b"] }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      assert.include(["allowedTools", "blockedTools"], both.details?.["field"])
      // Even empty lists: both present is both modes.
      yield* TestServer.expectError(
        yield* post({ ...minimal("both-empty"), allowedTools: [], blockedTools: [] }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )

      const server = yield* create({ ...minimal("lists"), allowedTools: ["a", "b"] })
      assert.deepStrictEqual([server.allowedTools, server.blockedTools], [["a", "b"], null])
      yield* expectInvalid(yield* patch(server.id, { blockedTools: ["c"] }), "blockedTools")
      const switched = yield* update(server.id, { allowedTools: null, blockedTools: ["c"] })
      assert.deepStrictEqual([switched.allowedTools, switched.blockedTools], [null, ["c"]])
      yield* expectInvalid(yield* patch(server.id, { allowedTools: ["a"] }), "allowedTools")
      const back = yield* update(server.id, { blockedTools: null, allowedTools: [] })
      assert.deepStrictEqual([back.allowedTools, back.blockedTools], [[], null])
      const cleared = yield* update(server.id, { allowedTools: null })
      assert.deepStrictEqual([cleared.allowedTools, cleared.blockedTools], [null, null])
      // A failed switch changed nothing.
      const read = yield* TestServer.expectOk(yield* get(server.id), 200, ToolServer)
      assert.deepStrictEqual(read, cleared)
    }))

  it.effect("approval is once, always or never; gatedTools needs once or always", () =>
    Effect.gen(function*() {
      yield* expectInvalid(yield* post({ ...minimal("bad-approval"), approval: "sometimes" }), "approval")
      yield* expectInvalid(yield* post({ ...minimal("gated-alone"), gatedTools: ["x"] }), "gatedTools")
      yield* expectInvalid(
        yield* post({ ...minimal("gated-never"), approval: "never", gatedTools: ["x"] }),
        "gatedTools"
      )
      for (const approval of ["once", "always", "never"]) {
        const server = yield* create({ ...minimal(`approval-${approval}`), approval })
        assert.strictEqual(server.approval, approval)
        assert.strictEqual(server.gatedTools, null)
      }
      const gated = yield* create({ ...minimal("gated"), approval: "once", gatedTools: ["write", "delete"] })
      assert.deepStrictEqual([gated.approval, gated.gatedTools], ["once", ["write", "delete"]])

      yield* expectInvalid(yield* patch(gated.id, { approval: "never" }), "gatedTools")
      yield* expectInvalid(yield* patch(gated.id, { approval: null }), "gatedTools")
      const always = yield* update(gated.id, { approval: "always" })
      assert.deepStrictEqual([always.approval, always.gatedTools], ["always", ["write", "delete"]])
      const ungated = yield* update(gated.id, { gatedTools: null })
      assert.deepStrictEqual([ungated.approval, ungated.gatedTools], ["always", null])
      const cleared = yield* update(gated.id, { approval: null })
      assert.deepStrictEqual([cleared.approval, cleared.gatedTools], [null, null])
      yield* expectInvalid(yield* patch(gated.id, { gatedTools: ["write"] }), "gatedTools")
      const both = yield* update(gated.id, { approval: "once", gatedTools: ["write"] })
      assert.deepStrictEqual([both.approval, both.gatedTools], ["once", ["write"]])
      const off = yield* update(gated.id, { approval: "never", gatedTools: null })
      assert.deepStrictEqual([off.approval, off.gatedTools], ["never", null])
    }))

  it.effect("bearer auth needs a secret of the same workspace; { type: 'none' } on update drops it", () =>
    Effect.gen(function*() {
      const own = yield* Collection.secrets.create({ name: "auth-own", value: "v1" })
      const foreign = yield* Collection.secrets.create({ name: "auth-foreign", value: "v2" }, Keys.b)
      const otherOrg = yield* Collection.secrets.create({ name: "auth-other-org", value: "v3" }, Keys.c)
      for (const secretId of ["sec_doesnotexist", foreign.id, otherOrg.id]) {
        yield* expectInvalid(
          yield* post({ ...minimal("bearer-bad"), auth: { type: "bearer", secretId } }),
          "auth.secretId"
        )
      }
      const server = yield* create({ ...minimal("bearer"), auth: { type: "bearer", secretId: own.id } })
      assert.deepStrictEqual(server.auth, { type: "bearer", secretId: own.id })

      const plain = yield* create(minimal("bearer-later"))
      yield* expectInvalid(yield* patch(plain.id, { auth: { type: "bearer", secretId: foreign.id } }), "auth.secretId")
      const added = yield* update(plain.id, { auth: { type: "bearer", secretId: own.id } })
      assert.deepStrictEqual(added.auth, { type: "bearer", secretId: own.id })
      assert.strictEqual(added.configVersion, 2)

      const dropped = yield* update(server.id, { auth: { type: "none" } })
      assert.deepStrictEqual(dropped.auth, { type: "none" })
      assert.strictEqual(dropped.configVersion, 2)
      const read = yield* TestServer.expectOk(yield* get(server.id), 200, ToolServer)
      assert.deepStrictEqual(read.auth, { type: "none" })

      // The bound secret cannot be deleted while a server uses it (4.9).
      const bound = yield* TestServer.expectError(
        yield* request("DELETE", `/v1/secrets/${own.id}`),
        409,
        "api_error",
        "resource_in_use"
      )
      assert.deepStrictEqual(bound.details, { inUseBy: [{ object: "tool_server", id: plain.id }] })
      yield* update(plain.id, { auth: { type: "none" } })
      yield* TestServer.expectOk(yield* request("DELETE", `/v1/secrets/${own.id}`), 200, Deleted("secret"))
    }))

  it.effect("resultCapBytes is 1024 to 10000000; the flags are typed; both bounds hold on update", () =>
    Effect.gen(function*() {
      for (const resultCapBytes of [1_023, 10_000_001, 0, 2_048.5, "2048", null]) {
        yield* expectInvalid(yield* post({ ...minimal("bad-cap"), resultCapBytes }), "resultCapBytes")
      }
      for (
        const [field, value] of [["trusted", "yes"], ["enabled", 1], ["defer", "no"], ["requiredSkills", 5]] as const
      ) {
        const error = yield* TestServer.expectError(
          yield* post({ ...minimal("bad-flag"), [field]: value }),
          400,
          "invalid_request_error",
          "invalid_request_error"
        )
        assert.strictEqual(error.details?.["field"], field, JSON.stringify(error))
      }
      const server = yield* create({ ...minimal("bounds"), resultCapBytes: 1_024, requestTimeoutMs: 1 })
      assert.deepStrictEqual([server.resultCapBytes, server.requestTimeoutMs], [1_024, 1])
      const top = yield* update(server.id, { resultCapBytes: 10_000_000, requestTimeoutMs: 600_000 })
      assert.deepStrictEqual([top.resultCapBytes, top.requestTimeoutMs], [10_000_000, 600_000])
      yield* expectInvalid(yield* patch(server.id, { resultCapBytes: 1_023 }), "resultCapBytes")
    }))

  it.effect("unknown fields are rejected on create and update", () =>
    Effect.gen(function*() {
      yield* expectInvalid(yield* post({ ...minimal("unknown-field"), tools: ["x"] }), "tools")
      const server = yield* create(minimal("unknown-field"))
      yield* expectInvalid(yield* patch(server.id, { configVersion: 7 }), "configVersion")
      yield* expectInvalid(yield* patch(server.id, { id: "ts_other" }), "id")
    }))
})

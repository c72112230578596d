/**
 * Tool servers (spec 4.6, 7, 8): registration rules, update semantics,
 * isolation, delete guarded by agent references, and the `test` route against
 * real MCP servers (server-everything over Streamable HTTP and legacy SSE, a
 * bearer-protected SDK server, a closed port).
 */
import { assert } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Agent } from "../../domain/Agent.ts"
import { Deleted, Page } from "../../domain/Page.ts"
import { Secret } from "../../domain/Secret.ts"
import { ToolServer, ToolServerTestResult } from "../../domain/ToolServer.ts"
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
import * as TestServer from "../support/TestServer.ts"

// ---- helpers ----------------------------------------------------------------

const { Keys, nowIso, request } = TestServer
const { post, patch, get, del, create, update } = Collection.toolServers

const test = (id: string, key?: string) => Collection.toolServers.action(id, "test", undefined, key)
const testOk = (id: string) =>
  Effect.flatMap(test(id), (reply) => TestServer.expectOk(reply, 200, ToolServerTestResult))

/** A public address; registration does not contact it. */
const remoteUrl = "https://93.184.215.14/mcp"

/** The minimal registration body. */
const minimal = (name: string) => ({ name, transport: "http", url: remoteUrl })

const expectedTools = (server: string, names: ReadonlyArray<string>) =>
  names.map((name) => ({ name, namespacedName: `mcp__${server}__${name}` }))

/** Checks the whole `test` answer: connected, a latency, and exactly `names` (in advertised order). */
const assertTested = (
  result: typeof ToolServerTestResult.Type,
  server: string,
  names: ReadonlyArray<string>
) => {
  assert.strictEqual(result.connected, true)
  assert.isAtLeast(result.latencyMs, 0)
  assert.deepStrictEqual(result.tools, expectedTools(server, names))
  assert.strictEqual(result.toolCount, names.length)
}

const ToolServerPage = Page(ToolServer)

/** Every route that addresses a tool server by id. */
const routes = resourceRoutes(Collection.toolServers.path, { enabled: false }, [["test"]])

const unique = Collection.uniqueName

// ---- the routes on one shared server ----------------------------------------

TestServer.suite()("tool servers", (it) => {
  // ---- registration ----------------------------------------------------------

  it.effect("POST answers 200 with every optional field resolved to its default", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 second")
      const now = yield* nowIso
      const reply = yield* post(minimal("defaults"))
      const server = yield* TestServer.expectOk(reply, 200, ToolServer)
      assert.match(server.id, /^ts_[0-9A-Za-z]+$/)
      assert.deepStrictEqual(reply.json, {
        id: server.id,
        object: "tool_server",
        name: "defaults",
        transport: "http",
        url: remoteUrl,
        allowedTools: null,
        blockedTools: null,
        protocolVersion: "2025-11-25",
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
      const read = yield* get(server.id)
      assert.strictEqual(read.status, 200)
      assert.deepStrictEqual(read.json, reply.json)
    }))

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

  it.effect("names are slugs of 1 to 56 of [A-Za-z0-9_-] without '__'", () =>
    Effect.gen(function*() {
      for (const name of ["", "x".repeat(57), "a__b", "__", "has space", "dot.name", "slash/name", "ümlaut", "tab\t"]) {
        yield* expectInvalid(yield* post(minimal(name)), "name")
      }
      yield* expectInvalid(yield* post({ transport: "http", url: remoteUrl }), "name")
      for (const name of ["n".repeat(56), "A-b_9", "_lead", "trail-", "a_b-c", "7"]) {
        const server = yield* create(minimal(name))
        assert.strictEqual(server.name, name)
      }
      const renamed = yield* create(minimal("rename-me"))
      yield* expectInvalid(yield* patch(renamed.id, { name: "x__y" }), "name")
      yield* expectInvalid(yield* patch(renamed.id, { name: "y".repeat(57) }), "name")
    }))

  it.effect("names are unique per organization on create and rename, free in another organization", () =>
    Effect.gen(function*() {
      const first = yield* create(minimal("shared-name"))
      const again = yield* TestServer.expectError(
        yield* post(minimal("shared-name")),
        409,
        "api_error",
        "name_conflict"
      )
      assert.strictEqual(again.details?.["field"], "name")
      // Key b: same organization, other workspace.
      yield* TestServer.expectError(yield* post(minimal("shared-name"), Keys.b), 409, "api_error", "name_conflict")
      // Key c: another organization.
      const elsewhere = yield* create(minimal("shared-name"), Keys.c)
      assert.notStrictEqual(elsewhere.id, first.id)

      const second = yield* create(minimal("second-name"))
      yield* TestServer.expectError(yield* patch(second.id, { name: "shared-name" }), 409, "api_error", "name_conflict")
      const inB = yield* create(minimal("name-in-b"), Keys.b)
      yield* TestServer.expectError(yield* patch(second.id, { name: "name-in-b" }), 409, "api_error", "name_conflict")
      assert.strictEqual((yield* get(second.id)).status, 200)
      assert.strictEqual(((yield* get(second.id)).json as { name: string }).name, "second-name")
      // Renaming to its own name is no conflict; a freed name can be reused.
      const same = yield* update(second.id, { name: "second-name" })
      assert.strictEqual(same.configVersion, 1)
      yield* TestServer.expectOk(yield* del(inB.id, Keys.b), 200, Deleted("tool_server"))
      const taken = yield* update(second.id, { name: "name-in-b" })
      assert.strictEqual(taken.name, "name-in-b")
      const reused = yield* create(minimal("second-name"))
      assert.strictEqual(reused.name, "second-name")
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

  it.effect("resultCapBytes is 1024 to 10000000; requestTimeoutMs is 1 to 600000, null restores 60000", () =>
    Effect.gen(function*() {
      for (const resultCapBytes of [1_023, 10_000_001, 0, 2_048.5, "2048", null]) {
        yield* expectInvalid(yield* post({ ...minimal("bad-cap"), resultCapBytes }), "resultCapBytes")
      }
      for (const requestTimeoutMs of [0, 600_001, -1, 1.5, "1000"]) {
        yield* expectInvalid(yield* post({ ...minimal("bad-timeout"), requestTimeoutMs }), "requestTimeoutMs")
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
      const reset = yield* update(server.id, { requestTimeoutMs: null })
      assert.strictEqual(reset.requestTimeoutMs, 60_000)
      yield* expectInvalid(yield* patch(server.id, { resultCapBytes: 1_023 }), "resultCapBytes")
      yield* expectInvalid(yield* patch(server.id, { requestTimeoutMs: 600_001 }), "requestTimeoutMs")
    }))

  it.effect("unknown fields are rejected on create and update", () =>
    Effect.gen(function*() {
      yield* expectInvalid(yield* post({ ...minimal("unknown-field"), tools: ["x"] }), "tools")
      const server = yield* create(minimal("unknown-field"))
      yield* expectInvalid(yield* patch(server.id, { configVersion: 7 }), "configVersion")
      yield* expectInvalid(yield* patch(server.id, { id: "ts_other" }), "id")
    }))

  it.effect("configVersion increments on structural changes, not on metadata-only or no-op updates", () =>
    Effect.gen(function*() {
      const server = yield* create({ ...minimal("versioned"), metadata: { a: "1" } })
      assert.strictEqual(server.configVersion, 1)
      const meta = yield* update(server.id, { metadata: { b: "2", a: null } })
      assert.deepStrictEqual(meta.metadata, { b: "2" })
      assert.strictEqual(meta.configVersion, 1)
      const noop = yield* update(server.id, { transport: "http", url: remoteUrl, name: "versioned", trusted: false })
      assert.strictEqual(noop.configVersion, 1)
      const steps: ReadonlyArray<Record<string, unknown>> = [
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
      let version = 1
      for (const step of steps) {
        const next = yield* update(server.id, step)
        version += 1
        assert.strictEqual(next.configVersion, version, JSON.stringify(step))
      }
      const final = yield* update(server.id, { metadata: { c: "3" } })
      assert.strictEqual(final.configVersion, version)
      assert.deepStrictEqual(final.metadata, { b: "2", c: "3" })
      assert.deepStrictEqual(yield* TestServer.expectOk(yield* get(server.id), 200, ToolServer), final)
    }))

  it.effect("list pages the caller's workspace only", () =>
    Effect.gen(function*() {
      const mine = yield* create(minimal("listed-a"))
      yield* create(minimal("listed-a2"))
      const theirs = yield* create(minimal("listed-b"), Keys.b)
      const pageA = yield* TestServer.expectOk(yield* request("GET", "/v1/tool-servers?limit=100"), 200, ToolServerPage)
      assert.strictEqual(pageA.object, "list")
      assert.isTrue(pageA.data.some((s) => s.id === mine.id))
      assert.isFalse(pageA.data.some((s) => s.id === theirs.id))
      const pageB = yield* TestServer.expectOk(
        yield* request("GET", "/v1/tool-servers?limit=100", { key: Keys.b }),
        200,
        ToolServerPage
      )
      assert.isTrue(pageB.data.some((s) => s.id === theirs.id))
      assert.isFalse(pageB.data.some((s) => s.id === mine.id))
      const first = yield* TestServer.expectOk(yield* request("GET", "/v1/tool-servers?limit=1"), 200, ToolServerPage)
      assert.strictEqual(first.data.length, 1)
      assert.strictEqual(first.limit, 1)
      assert.isTrue(first.hasMore)
      assert.isString(first.nextCursor)
    }))

  it.effect.each(routes)("an unknown id is 404 tool_server_not_found: $label", (route) =>
    Effect.gen(function*() {
      yield* expectNotFound(yield* call(route, "ts_doesnotexist"), "tool_server_not_found")
    }))

  it.effect.each(byOtherTenants(routes))(
    "another workspace's server is 403 permission_denied and stays untouched: $label",
    ({ route, tenant }) =>
      Effect.gen(function*() {
        const server = yield* create(minimal(unique("isolated")))
        yield* expectDenied(yield* call(route, server.id, tenant.key))
        assert.deepStrictEqual(yield* TestServer.expectOk(yield* get(server.id), 200, ToolServer), server)
      })
  )

  it.effect("DELETE answers the delete response; while an agent references the server it is 409 resource_in_use", () =>
    Effect.gen(function*() {
      const server = yield* create(minimal("deletable"))
      const agent = yield* TestServer.expectOk(
        yield* request("POST", "/v1/agents", { body: { capabilities: { mcp: { toolServerIds: [server.id] } } } }),
        200,
        Agent
      )
      const inUse = yield* TestServer.expectError(yield* del(server.id), 409, "api_error", "resource_in_use")
      assert.deepStrictEqual(inUse.details, { inUseByAgentIds: [agent.id] })
      yield* TestServer.expectOk(yield* request("DELETE", `/v1/agents/${agent.id}`), 200, Deleted("agent"))
      const deleted = yield* TestServer.expectOk(yield* del(server.id), 200, Deleted("tool_server"))
      assert.deepStrictEqual(deleted, { id: server.id, object: "tool_server", deleted: true })
      yield* TestServer.expectError(yield* get(server.id), 404, "not_found", "tool_server_not_found")
      yield* TestServer.expectError(yield* del(server.id), 404, "not_found", "tool_server_not_found")
    }))

  // ---- the test route against real servers -----------------------------------

  it.effect("test: server-everything over Streamable HTTP lists its tools as mcp__{server}__{tool}", () =>
    Effect.gen(function*() {
      const everything = yield* McpServers.everything("streamableHttp")
      const server = yield* create({ name: "everything", transport: "http", url: everything.url })
      assertTested(yield* testOk(server.id), "everything", McpServers.everythingTools)

      yield* update(server.id, { blockedTools: ["echo", "get-env", "not-advertised"] })
      assertTested(
        yield* testOk(server.id),
        "everything",
        McpServers.everythingTools.filter((t) => t !== "echo" && t !== "get-env")
      )
      yield* update(server.id, { blockedTools: null, allowedTools: ["get-sum", "echo", "not-advertised"] })
      assertTested(yield* testOk(server.id), "everything", ["echo", "get-sum"])
      yield* update(server.id, { allowedTools: [] })
      assertTested(yield* testOk(server.id), "everything", [])
      yield* update(server.id, { allowedTools: null })
      // The server name is part of every model-facing name.
      yield* update(server.id, { name: "every-thing_2" })
      assertTested(yield* testOk(server.id), "every-thing_2", McpServers.everythingTools)
    }))

  it.effect("test: server-everything over legacy HTTP+SSE lists the same tools", () =>
    Effect.gen(function*() {
      const everything = yield* McpServers.everything("sse")
      const server = yield* create({ name: "everything-sse", transport: "sse", url: everything.url })
      assertTested(yield* testOk(server.id), "everything-sse", McpServers.everythingTools)
      yield* update(server.id, { blockedTools: ["simulate-research-query"] })
      assertTested(
        yield* testOk(server.id),
        "everything-sse",
        McpServers.everythingTools.filter((t) => t !== "simulate-research-query")
      )
    }))

  it.effect("test: the wrong transport for the endpoint is 502 service_unavailable", () =>
    Effect.gen(function*() {
      const everything = yield* McpServers.everything("streamableHttp")
      const server = yield* create({ name: "wrong-transport", transport: "sse", url: everything.url })
      yield* TestServer.expectError(yield* test(server.id), 502, "api_error", "service_unavailable")
    }))

  it.effect("test: bearer auth sends the secret; without it or with a wrong token the test is 502", () =>
    Effect.gen(function*() {
      const token = "mcp-secret-token-0123"
      // "mcp__secured__" is 14 characters: a 50-character tool makes 64 (exposed), 51 makes 65 (not).
      const at64 = "t".repeat(50)
      const at65 = "u".repeat(51)
      const advertised = ["lookup", "has space", "dotted.name", at64, at65, "ok-name_2", "slash/tool", "ümlaut"]
      const peer = yield* McpServers.bearerServer(token, advertised)

      const secret = yield* Collection.secrets.create({ name: "mcp-token", value: token })
      const server = yield* create({
        name: "secured",
        transport: "http",
        url: peer.url,
        auth: { type: "bearer", secretId: secret.id }
      })
      assertTested(yield* testOk(server.id), "secured", ["lookup", at64, "ok-name_2"])
      const withAuth = peer.authorizations()
      assert.isAbove(withAuth.length, 0)
      assert.deepStrictEqual(withAuth, withAuth.map(() => `Bearer ${token}`))

      // No auth: no Authorization header at all, and the server refuses.
      const anonymous = yield* create({ name: "secured-anon", transport: "http", url: peer.url })
      const before = peer.authorizations().length
      const refused = yield* TestServer.expectError(yield* test(anonymous.id), 502, "api_error", "service_unavailable")
      assert.notInclude(refused.message, token)
      const anonymousRequests = peer.authorizations().slice(before)
      assert.isAbove(anonymousRequests.length, 0)
      assert.deepStrictEqual(anonymousRequests, anonymousRequests.map(() => null))

      // A wrong token.
      const wrong = yield* Collection.secrets.create({ name: "mcp-token-wrong", value: "not-the-token" })
      const mistaken = yield* create({
        name: "secured-wrong",
        transport: "http",
        url: peer.url,
        auth: { type: "bearer", secretId: wrong.id }
      })
      const wrongReply = yield* test(mistaken.id)
      yield* TestServer.expectError(wrongReply, 502, "api_error", "service_unavailable")
      assert.notInclude(wrongReply.text, "not-the-token")
      // The secret is opened at the moment of use: rotating it fixes the server.
      yield* TestServer.expectOk(
        yield* request("POST", `/v1/secrets/${wrong.id}/rotate`, { body: { value: token } }),
        200,
        Secret
      )
      // "mcp__secured-wrong__" is 20 characters: the 50-character tool now makes 70 and is hidden.
      assertTested(yield* testOk(mistaken.id), "secured-wrong", ["lookup", "ok-name_2"])

      // Dropping the bearer with { type: 'none' } stops sending it.
      yield* update(server.id, { auth: { type: "none" } })
      yield* TestServer.expectError(yield* test(server.id), 502, "api_error", "service_unavailable")

      // The allow/block filter applies before naming; an illegal name stays hidden even when allowed.
      yield* update(mistaken.id, { allowedTools: ["has space", at65, "lookup"] })
      assertTested(yield* testOk(mistaken.id), "secured-wrong", ["lookup"])
    }))

  it.effect("test: a server that never answers is 502 service_unavailable once requestTimeoutMs passes", () =>
    Effect.gen(function*() {
      for (const [name, transport, path] of [["silent-http", "http", "/mcp"], ["silent-sse", "sse", "/sse"]] as const) {
        const silent = yield* McpServers.holding
        const server = yield* create({ name, transport, url: silent.origin + path, requestTimeoutMs: 5_000 })
        const fiber = yield* Effect.forkChild(test(server.id))
        // The service now waits on the held request, its timeout running on the TestClock.
        yield* Effect.raceFirst(silent.arrived, Effect.asVoid(Fiber.await(fiber)))
        yield* TestClock.adjust("5 seconds")
        const error = yield* TestServer.expectError(yield* Fiber.join(fiber), 502, "api_error", "service_unavailable")
        assert.include(error.message, silent.origin.replace("http://", ""))
      }
    }))

  it.effect("test: an unreachable server is 502 service_unavailable naming the server", () =>
    Effect.gen(function*() {
      const port = yield* TestServer.freePort
      for (const [name, transport, path] of [["closed-http", "http", "/mcp"], ["closed-sse", "sse", "/sse"]] as const) {
        const url = `http://127.0.0.1:${port}${path}`
        const server = yield* create({ name, transport, url })
        const error = yield* TestServer.expectError(yield* test(server.id), 502, "api_error", "service_unavailable")
        assert.include(error.message, `127.0.0.1:${port}`)
      }
    }))
})

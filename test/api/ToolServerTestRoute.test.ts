/**
 * The tool server's `test` route (spec 4.6) against real MCP servers:
 * server-everything over Streamable HTTP and legacy SSE, a bearer-protected
 * SDK server, a server that never answers, a closed port. Each lists the
 * tools a model would see, as mcp__{server}__{tool}, or is 502.
 */
import { assert } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Secret } from "../../domain/Secret.ts"
import { ToolServerTestResult } from "../../domain/ToolServer.ts"
import * as Collection from "../support/Collection.ts"
import { testRoute } from "../support/CrudAdapters.ts"
import * as McpServers from "../support/McpServers.ts"
import * as TestServer from "../support/TestServer.ts"

const { request } = TestServer
const { create, update } = Collection.toolServers

/** `assertTested` checks the whole answer: connected, a latency, and exactly `names` (in advertised order). */
const route = testRoute(Collection.toolServers, ToolServerTestResult, (answer) => answer.toolCount, "mcp")
const { assertTested, test, testOk } = route

TestServer.suite()("tool server test route", (it) => {
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

/**
 * Warm MCP sessions against a real stateful SDK server: one connect however
 * many ask at once, reuse across leases, per-lease Svc-* headers on a shared
 * session, the idle window on TestClock (DELETE), failures not kept, a
 * forgotten session (404) replaced with the call sent once more, a restarted
 * server, and tool lists re-read after list_changed, on request and with age.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { ServiceConfig } from "../../../src/config/ServiceConfig.ts"
import { Outbound } from "../../../src/outbound/Outbound.ts"
import { keyOf, McpSessions, type SessionTarget } from "../../../src/tools/McpSessions.ts"
import { type SessionServer, sessionServer, sessionServerOn } from "../../support/SessionMcpServer.ts"
import { baseConfig, freePort } from "../../support/TestServer.ts"

const Pool = McpSessions.layer.pipe(
  Layer.provide(Layer.mergeAll(
    Outbound.layer({ allowPrivate: true, dnsServers: [] }),
    Layer.succeed(ServiceConfig)({ ...baseConfig(undefined, 0), mcpIdleMs: 60_000 })
  ))
)

const target = (url: string): SessionTarget => ({
  serverId: "ts_sessions",
  configVersion: 1,
  transport: "http",
  url,
  token: undefined,
  timeoutMs: 10_000
})

const forRun = (runId: string, relist = false) => ({
  headers: { "svc-run-id": runId, "svc-root-run-id": `root_${runId}` },
  relist
})

const toolNames = (lease: { readonly tools: ReadonlyArray<{ readonly name: string }> }) =>
  lease.tools.map((t) => t.name)

const textOf = (result: { readonly content: ReadonlyArray<{ readonly type: string }> }) =>
  result.content.flatMap((c) => ("text" in c && typeof c.text === "string" ? [c.text] : [])).join("")

/** Requests of `rpc` as the server saw them. */
const calls = (server: SessionServer, rpc: string) => server.seen().filter((s) => s.rpc === rpc)

describe("McpSessions", () => {
  it.effect("leases asking at the same time share one connect; later leases reuse it; the pool's end DELETEs it", () =>
    Effect.gen(function*() {
      const server = yield* sessionServer
      yield* Effect.gen(function*() {
        const sessions = yield* McpSessions
        const listed = yield* Effect.forEach(
          ["run_a", "run_b", "run_c", "run_d"],
          (runId) => Effect.scoped(Effect.map(sessions.acquire(target(server.url), forRun(runId)), toolNames)),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(listed, [0, 1, 2, 3].map(() => ["echo", "add_tool", "wait"]))
        const result = yield* Effect.scoped(
          Effect.flatMap(
            sessions.acquire(target(server.url), forRun("run_e")),
            (lease) => lease.call("echo", { text: "hi" })
          )
        )
        assert.strictEqual(textOf(result), "hi")
        assert.strictEqual(server.opened(), 1)
        assert.strictEqual(calls(server, "initialize").length, 1)
        assert.strictEqual(calls(server, "tools/list").length, 1)
        assert.deepStrictEqual(server.deleted(), [])
      }).pipe(Effect.provide(Pool))
      const [session] = calls(server, "tools/call").map((s) => s.sessionId)
      assert.deepStrictEqual<ReadonlyArray<string | undefined>>(server.deleted(), [session])
    }).pipe(Effect.scoped))

  it.effect("each lease's requests on the shared session carry its own Svc-Run-Id and Svc-Root-Run-Id", () =>
    Effect.gen(function*() {
      const server = yield* sessionServer
      yield* Effect.scoped(Effect.gen(function*() {
        const sessions = yield* McpSessions
        const a = yield* sessions.acquire(target(server.url), forRun("run_a"))
        const b = yield* sessions.acquire(target(server.url), forRun("run_b"))
        yield* Effect.all([
          a.call("echo", { text: "from a" }),
          b.call("echo", { text: "from b" }),
          a.call("echo", { text: "a again" })
        ], {
          concurrency: "unbounded"
        })
      })).pipe(Effect.provide(Pool))
      assert.strictEqual(server.opened(), 1)
      const [opening] = calls(server, "initialize")
      assert.deepStrictEqual([opening.runId, opening.rootRunId], ["run_a", "root_run_a"])
      const made = calls(server, "tools/call")
      assert.strictEqual(made.length, 3)
      assert.strictEqual(new Set(made.map((c) => c.sessionId)).size, 1)
      assert.deepStrictEqual(made.map((c) => [c.runId, c.rootRunId]).sort(), [
        ["run_a", "root_run_a"],
        ["run_a", "root_run_a"],
        ["run_b", "root_run_b"]
      ])
    }).pipe(Effect.scoped))

  it.effect("an unused session closes after SVC_MCP_IDLE_MS on the Clock (DELETE); the next lease opens a new one", () =>
    Effect.gen(function*() {
      const server = yield* sessionServer
      yield* Effect.gen(function*() {
        const sessions = yield* McpSessions
        const use = (runId: string) => Effect.scoped(sessions.acquire(target(server.url), forRun(runId)))
        yield* use("run_a")
        yield* TestClock.adjust("59999 millis")
        // Used again just before the window ends: the window starts over.
        yield* use("run_b")
        yield* TestClock.adjust("59999 millis")
        assert.strictEqual(server.opened(), 1)
        yield* TestClock.adjust("1 millis")
        yield* server.awaitDeleted(1)
        assert.strictEqual(server.opened(), 1)
        yield* use("run_c")
        assert.strictEqual(server.opened(), 2)
        // A held session never idles out.
        yield* Effect.scoped(
          Effect.andThen(sessions.acquire(target(server.url), forRun("run_d")), TestClock.adjust("10 minutes"))
        )
        assert.strictEqual(server.deleted().length, 1)
      }).pipe(Effect.provide(Pool))
    }).pipe(Effect.scoped))

  it.effect("a failed connect is not kept: the next lease connects again", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const url = `http://127.0.0.1:${port}/mcp`
      yield* Effect.gen(function*() {
        const sessions = yield* McpSessions
        const refused = yield* Effect.flip(Effect.scoped(sessions.acquire(target(url), forRun("run_a"))))
        assert.match(refused.message, /^MCP handshake with http:\/\/127\.0\.0\.1:\d+\/mcp failed: fetch failed/)
        const server = yield* sessionServerOn(port)
        const lease = yield* sessions.acquire(target(url), forRun("run_b"))
        assert.deepStrictEqual(toolNames(lease), ["echo", "add_tool", "wait"])
        assert.strictEqual(server.opened(), 1)
      }).pipe(Effect.provide(Pool), Effect.scoped)
    }))

  it.effect("a session the server forgot (404) is dropped and the call is sent once more on a new session", () =>
    Effect.gen(function*() {
      const server = yield* sessionServer
      yield* Effect.scoped(Effect.gen(function*() {
        const sessions = yield* McpSessions
        const lease = yield* sessions.acquire(target(server.url), forRun("run_a"))
        yield* server.expire
        assert.strictEqual(textOf(yield* lease.call("echo", { text: "still here" })), "still here")
        assert.strictEqual(server.opened(), 2)
        const [refused, answered] = calls(server, "tools/call")
        assert.notStrictEqual(refused.sessionId, answered.sessionId)
        assert.strictEqual(answered.runId, "run_a")
        // The lease stays on the new session, and so does the pool.
        yield* lease.call("echo", { text: "again" })
        yield* Effect.scoped(sessions.acquire(target(server.url), forRun("run_b")))
        assert.strictEqual(server.opened(), 2)
        assert.deepStrictEqual(calls(server, "tools/call").slice(2).map((c) => c.sessionId), [answered.sessionId])
      })).pipe(Effect.provide(Pool))
    }).pipe(Effect.scoped))

  it.effect("a restarted server (connections dropped, sessions gone) is survived by the next lease", () =>
    Effect.gen(function*() {
      const server = yield* sessionServer
      yield* Effect.gen(function*() {
        const sessions = yield* McpSessions
        const call = (runId: string) =>
          Effect.scoped(
            Effect.flatMap(sessions.acquire(target(server.url), forRun(runId)), (lease) =>
              lease.call("echo", { text: runId }))
          )
        assert.strictEqual(textOf(yield* call("run_a")), "run_a")
        const [first] = calls(server, "tools/call")
        yield* server.restart
        // The pool sees its session's stream break, drops the session and ends it (the new server does not know it).
        yield* server.awaitSeen((s) => s.http === "DELETE" && s.sessionId === first.sessionId)
        assert.strictEqual(textOf(yield* call("run_b")), "run_b")
        assert.strictEqual(server.opened(), 2)
      }).pipe(Effect.provide(Pool))
    }).pipe(Effect.scoped))

  it.effect("the tool list is read again after list_changed, when a lease asks (relist), and once older than the idle window", () =>
    Effect.gen(function*() {
      const server = yield* sessionServer
      yield* Effect.gen(function*() {
        const sessions = yield* McpSessions
        const names = (runId: string, relist = false) =>
          Effect.scoped(Effect.map(sessions.acquire(target(server.url), forRun(runId, relist)), toolNames))
        // add_tool announces list_changed on its own response stream, before its result.
        yield* Effect.scoped(
          Effect.flatMap(
            sessions.acquire(target(server.url), forRun("run_a")),
            (lease) => lease.call("add_tool", { text: "late" })
          )
        )
        assert.deepStrictEqual(yield* names("run_b"), ["echo", "add_tool", "wait", "late"])
        // A silent change: the cached list stands until a lease asks for a fresh one.
        yield* server.setTools(["echo"])
        assert.deepStrictEqual(yield* names("run_c"), ["echo", "add_tool", "wait", "late"])
        assert.deepStrictEqual(yield* names("run_d", true), ["echo"])
        yield* server.setTools(["echo", "newer"])
        yield* Effect.scoped(Effect.gen(function*() {
          yield* sessions.acquire(target(server.url), forRun("run_e"))
          yield* TestClock.adjust("60 seconds")
          assert.deepStrictEqual(yield* names("run_f"), ["echo", "newer"])
        }))
        assert.strictEqual(server.opened(), 1)
      }).pipe(Effect.provide(Pool))
    }).pipe(Effect.scoped))

  it("the pool key has the token's SHA-256, never the token; another token is another session", () => {
    const token = "mcp-token-0123456789"
    const key = keyOf({ ...target("http://127.0.0.1:1/mcp"), token: Redacted.make(token) })
    assert.notInclude(key, token)
    assert.include(key, "c0b755d06428671659cd9e5d5620d0b042a7c8f6951371141e464ba85b6d62f2")
    assert.notStrictEqual(key, keyOf({ ...target("http://127.0.0.1:1/mcp"), token: Redacted.make("another") }))
  })
})

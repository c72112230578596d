/**
 * The outbound URL policy through the API (spec 4.6 rule 7, 4.7 rule 6, 7)
 * with private URLs NOT allowed: every user-registered URL (hooks, result
 * handlers, tool servers, HTTP connection spec and baseUrl) must be https on
 * a public address, whether written literally or reached through DNS. Names
 * are resolved through a real DNS server run by the test.
 */
import { assert } from "@effect/vitest"
import { type Duration, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { ToolApprovalHook } from "../../domain/ToolApprovalHook.ts"
import * as Collection from "../support/Collection.ts"
import { failureTextsOf } from "../support/Conversation.ts"
import { DnsServer } from "../support/DnsServer.ts"
import * as TestServer from "../support/TestServer.ts"
import { parseWithAi } from "../support/UiStream.ts"

// ---- helpers ----------------------------------------------------------------

const { request } = TestServer

/** Refused whatever the resolver says: wrong scheme, credentials, literal non-public addresses, bare or loopback names. */
const refusedUrls = [
  "http://93.184.215.14/x",
  "http://good.example.com/x",
  "https://user:pw@93.184.215.14/x",
  "https://10.0.0.1/x",
  "https://172.16.0.1/x",
  "https://192.168.1.10/x",
  "https://127.0.0.1/x",
  "https://100.64.0.1/x",
  "https://169.254.169.254/latest/meta-data",
  "https://0.0.0.0/x",
  "https://[::1]/x",
  "https://[fe80::1]/x",
  "https://[fd00::1]/x",
  "https://[::ffff:10.0.0.1]/x",
  "https://localhost/x",
  "https://api.localhost/x",
  "https://intranet/x"
]

/** Names the test's DNS server answers. */
const records = {
  "evil.example.com": "10.0.0.7",
  "meta.example.com": "169.254.169.254",
  "loop.example.com": "127.0.0.1",
  "good.example.com": "93.184.215.14",
  "down.example.com": "93.184.215.14",
  "rebind.example.com": "93.184.215.14",
  "api-rebind.example.com": "93.184.215.14"
}

/** Refused because of what the name resolves to (or that it does not resolve). */
const refusedNames = [
  "https://evil.example.com/hook",
  "https://meta.example.com/hook",
  "https://loop.example.com/hook",
  "https://nowhere.example.com/hook"
]

const acceptedUrls = ["https://93.184.215.14/x", "https://good.example.com/hook", "https://[2606:4700::1111]/x"]

const { uniqueName } = Collection

const inlineSpec = JSON.stringify({ openapi: "3.0.3", info: { title: "t", version: "1" }, paths: {} })

/** The registration routes and bodies, each putting `url` into one URL field. */
const registrations: ReadonlyArray<{
  readonly what: string
  readonly path: string
  readonly field: string
  readonly body: (url: string) => Record<string, unknown>
}> = [
  {
    what: "tool approval hook",
    path: "/v1/tool-approval-hooks",
    field: "url",
    body: (url) => ({ name: "hook", url, secret: "whsec_x_signing_secret" })
  },
  {
    what: "result handler",
    path: "/v1/result-handlers",
    field: "url",
    body: (url) => ({ kind: "artifact", name: "rh", url, secret: "rh_x_signing_secret" })
  },
  {
    what: "tool server",
    path: "/v1/tool-servers",
    field: "url",
    body: (url) => ({ name: uniqueName("ts"), transport: "http", url })
  },
  {
    what: "HTTP connection spec",
    path: "/v1/http-connections",
    field: "spec",
    body: (url) => ({ name: uniqueName("hc"), spec: url })
  },
  {
    what: "HTTP connection baseUrl",
    path: "/v1/http-connections",
    field: "baseUrl",
    body: (url) => ({ name: uniqueName("hc"), spec: inlineSpec, baseUrl: url })
  }
]

const expectUrlNotAllowed = (reply: TestServer.Reply, field: string, context: string) =>
  Effect.gen(function*() {
    if (reply.status !== 400) assert.fail(`${context}: expected 400, got ${reply.status}: ${reply.text}`)
    const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", "url_not_allowed")
    assert.strictEqual(error.details?.["field"], field, `${context}: ${reply.text}`)
    assert.isAbove(error.message.length, 0)
    return error
  })

const expectRegistered = (reply: TestServer.Reply, context: string) => {
  assert.strictEqual(reply.status, 200, `${context}: ${reply.text}`)
}

const hookPath = "/v1/tool-approval-hooks"

const createHook = (url: string, requestTimeoutMs: number) =>
  Collection.toolApprovalHooks.create({ name: "hook", url, secret: "whsec_x_signing_secret", requestTimeoutMs })

/**
 * Runs a hook test whose delivery starts by resolving `name`: once the
 * service has asked the DNS server, the delivery (and its timeout on the
 * TestClock) is under way, so advancing the clock past requestTimeoutMs ends
 * it if nothing else has.
 */
const testThroughDns = (hookId: string, name: string, timeout: Duration.Input) =>
  Effect.gen(function*() {
    const dns = yield* DnsServer
    const before = yield* dns.queriesFor(name)
    const fiber = yield* Effect.forkChild(request("POST", `${hookPath}/${hookId}/test`))
    // Should the service answer without resolving, there is nothing to wait for.
    yield* Effect.raceFirst(dns.awaitQueries(name, before + 1), Effect.asVoid(Fiber.await(fiber)))
    yield* TestClock.adjust(timeout)
    return yield* Fiber.join(fiber)
  })

const TestLayer = Layer.unwrap(
  Effect.map(DnsServer, (dns) => TestServer.layer({ allowPrivateUrls: false, dnsServers: [dns.address] }))
).pipe(Layer.provideMerge(DnsServer.layer(records)))

// ---- one server with private URLs refused -----------------------------------

TestServer.suiteWith(TestLayer)("URL policy (private URLs not allowed)", (it) => {
  it.effect("non-https, credentials, private, link-local, loopback and bare-host URLs are 400 url_not_allowed on every registration", () =>
    Effect.gen(function*() {
      for (const registration of registrations) {
        for (const url of refusedUrls) {
          const reply = yield* request("POST", registration.path, { body: registration.body(url) })
          yield* expectUrlNotAllowed(reply, registration.field, `${registration.what} ${url}`)
        }
      }
    }))

  it.effect("a public IP literal registers everywhere", () =>
    Effect.gen(function*() {
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "hook",
        url: "https://93.184.215.14/x",
        secret: "whsec_x_signing_secret"
      })
      assert.strictEqual(hook.url, "https://93.184.215.14/x")
      const handler = yield* Collection.resultHandlers.create(
        { kind: "artifact", name: "rh", url: "https://93.184.215.14/x", secret: "rh_x_signing_secret" }
      )
      assert.strictEqual(handler.url, "https://93.184.215.14/x")
      const server = yield* Collection.toolServers.create({
        name: uniqueName("ts"),
        transport: "http",
        url: "https://93.184.215.14/mcp"
      })
      assert.strictEqual(server.url, "https://93.184.215.14/mcp")
      const bySpec = yield* Collection.httpConnections.create({
        name: uniqueName("hc"),
        spec: "https://93.184.215.14/openapi.json"
      })
      assert.strictEqual(bySpec.spec, "https://93.184.215.14/openapi.json")
      const byBase = yield* Collection.httpConnections.create(
        { name: uniqueName("hc"), spec: inlineSpec, baseUrl: "https://93.184.215.14/api" }
      )
      assert.strictEqual(byBase.baseUrl, "https://93.184.215.14/api")
      for (const registration of registrations) {
        for (const url of acceptedUrls) {
          expectRegistered(
            yield* request("POST", registration.path, { body: registration.body(url) }),
            `${registration.what} ${url}`
          )
        }
      }
    }))

  it.effect("a name is resolved through the configured DNS server: private answers and unresolvable names are refused", () =>
    Effect.gen(function*() {
      const dns = yield* DnsServer
      const evilBefore = yield* dns.queriesFor("evil.example.com")
      for (const registration of registrations) {
        for (const url of refusedNames) {
          const reply = yield* request("POST", registration.path, { body: registration.body(url) })
          yield* expectUrlNotAllowed(reply, registration.field, `${registration.what} ${url}`)
        }
      }
      assert.isAbove(yield* dns.queriesFor("evil.example.com"), evilBefore, "the service asked the test's DNS server")

      const goodBefore = yield* dns.queriesFor("good.example.com")
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "hook",
        url: "https://good.example.com/hook",
        secret: "whsec_x_signing_secret"
      })
      assert.strictEqual(hook.url, "https://good.example.com/hook")
      assert.isAbove(yield* dns.queriesFor("good.example.com"), goodBefore)
    }))

  it.effect("updates are held to the same policy", () =>
    Effect.gen(function*() {
      const hook = yield* createHook("https://good.example.com/hook", 1_000)
      for (
        const url of [
          "http://good.example.com/hook",
          "https://10.0.0.1/x",
          "https://evil.example.com/hook",
          "https://[::1]/x"
        ]
      ) {
        yield* expectUrlNotAllowed(
          yield* request("PATCH", `${hookPath}/${hook.id}`, { body: { url } }),
          "url",
          `hook PATCH ${url}`
        )
      }
      const handler = yield* Collection.resultHandlers.create(
        { kind: "artifact", name: "rh", url: "https://good.example.com/a", secret: "rh_x_signing_secret" }
      )
      yield* expectUrlNotAllowed(
        yield* request("PATCH", `/v1/result-handlers/${handler.id}`, { body: { url: "https://169.254.169.254/x" } }),
        "url",
        "result handler PATCH"
      )
      const server = yield* Collection.toolServers.create(
        { name: uniqueName("ts"), transport: "http", url: "https://good.example.com/mcp" }
      )
      yield* expectUrlNotAllowed(
        yield* request("PATCH", `/v1/tool-servers/${server.id}`, { body: { url: "https://localhost/mcp" } }),
        "url",
        "tool server PATCH"
      )
      const connection = yield* Collection.httpConnections.create(
        { name: uniqueName("hc"), spec: inlineSpec, baseUrl: "https://good.example.com/api" }
      )
      yield* expectUrlNotAllowed(
        yield* request("PATCH", `/v1/http-connections/${connection.id}`, {
          body: { baseUrl: "https://evil.example.com/api" }
        }),
        "baseUrl",
        "HTTP connection PATCH baseUrl"
      )
      yield* expectUrlNotAllowed(
        yield* request("PATCH", `/v1/http-connections/${connection.id}`, {
          body: { spec: "https://10.1.2.3/openapi.json" }
        }),
        "spec",
        "HTTP connection PATCH spec"
      )
      // Nothing changed.
      const read = yield* TestServer.expectOk(yield* request("GET", `${hookPath}/${hook.id}`), 200, ToolApprovalHook)
      assert.strictEqual(read.url, "https://good.example.com/hook")
      assert.strictEqual(read.configVersion, hook.configVersion)
    }))

  it.effect("test of a hook on a public address that does not answer is 502 service_unavailable", () =>
    Effect.gen(function*() {
      const hook = yield* createHook("https://down.example.com:8443/hook", 2_000)
      const reply = yield* testThroughDns(hook.id, "down.example.com", "2 seconds")
      const error = yield* TestServer.expectError(reply, 502, "api_error", "service_unavailable")
      assert.isAbove(error.message.length, 0)
    }))

  it.effect("a name that turns private after registration is refused at delivery time (DNS rebinding)", () =>
    Effect.gen(function*() {
      const dns = yield* DnsServer
      const hook = yield* createHook("https://rebind.example.com/hook", 2_000)
      yield* dns.setA("rebind.example.com", "10.0.0.7")
      const reply = yield* testThroughDns(hook.id, "rebind.example.com", "2 seconds").pipe(
        Effect.ensuring(dns.setA("rebind.example.com", "93.184.215.14"))
      )
      const error = yield* TestServer.expectError(reply, 502, "api_error", "service_unavailable")
      assert.include(error.message, "10.0.0.7", "the refusal names the private address the name now resolves to")
    }))

  it.effect("an HTTP tool call to a base URL whose name turned loopback is refused at call time, without a connection", () =>
    Effect.gen(function*() {
      const dns = yield* DnsServer
      const spec = JSON.stringify({
        openapi: "3.0.3",
        info: { title: "t", version: "1" },
        paths: { "/ping": { get: { operationId: "ping", responses: { "200": { description: "OK" } } } } }
      })
      const connection = yield* Collection.httpConnections.create(
        { name: uniqueName("hc"), spec, baseUrl: "https://api-rebind.example.com" }
      )
      const agent = yield* Collection.agents.create({ capabilities: { http: { connectionIds: [connection.id] } } })
      const thread = yield* Collection.threads.create({ agentId: agent.id })
      yield* dns.setA("api-rebind.example.com", "127.0.0.1")
      const reply = yield* request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: `/tool api__${connection.name}__ping {}` }
      }).pipe(Effect.ensuring(dns.setA("api-rebind.example.com", "93.184.215.14")))
      const parsed = yield* Effect.orDie(parseWithAi(reply.text))
      const errors = failureTextsOf(parsed.chunks)
      assert.strictEqual(errors.length, 1)
      assert.include(errors[0], "127.0.0.1", "the refusal names the loopback address the name now resolves to")
      assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
    }))
})

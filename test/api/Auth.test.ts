/**
 * Authentication (spec 5.1), workspace isolation (spec 1, Conventions:
 * Isolation) and the X-Request-Id header every response carries (spec 1,
 * Conventions: Request id; spec 7).
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Agent } from "../../domain/Agent.ts"
import { Page } from "../../domain/Page.ts"
import { Thread } from "../../domain/Thread.ts"
import * as Collection from "../support/Collection.ts"
import { expectDenied, otherTenants } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

const RequestIdShape = TestServer.requestIdShape

interface Fixture {
  readonly agent: Agent
  readonly thread: Thread
}

/** An agent and a thread owned by key a (org_acme / prod). */
const makeFixture = Effect.gen(function*() {
  const agent = yield* Collection.agents.create({ context: "owned by a", metadata: { owner: "a" } })
  const created = yield* Collection.threads.create({ agentId: agent.id, metadata: { owner: "a" } })
  // The resource as GET returns it (without `created`).
  return { agent, thread: yield* Schema.decodeUnknownEffect(Thread)(created).pipe(Effect.orDie) }
})

interface Route {
  readonly method: string
  readonly label: string
  readonly path: (f: Fixture) => string
  /** A body that would be accepted with a valid key (so only authentication can fail). */
  readonly body?: (f: Fixture) => unknown
}

/** Every authenticated route of the service. */
const authenticatedRoutes: ReadonlyArray<Route> = [
  { method: "GET", label: "/v1/agents", path: () => "/v1/agents" },
  { method: "POST", label: "/v1/agents", path: () => "/v1/agents", body: () => ({ context: "new agent" }) },
  {
    method: "POST",
    label: "/v1/agents/validate",
    path: () => "/v1/agents/validate",
    body: () => ({ context: "validate me" })
  },
  { method: "GET", label: "/v1/agents/:id", path: (f) => `/v1/agents/${f.agent.id}` },
  {
    method: "PATCH",
    label: "/v1/agents/:id",
    path: (f) => `/v1/agents/${f.agent.id}`,
    body: () => ({ context: "changed" })
  },
  { method: "DELETE", label: "/v1/agents/:id", path: (f) => `/v1/agents/${f.agent.id}` },
  { method: "GET", label: "/v1/threads?agentId=", path: (f) => `/v1/threads?agentId=${f.agent.id}` },
  { method: "POST", label: "/v1/threads", path: () => "/v1/threads", body: (f) => ({ agentId: f.agent.id }) },
  { method: "GET", label: "/v1/threads/:id", path: (f) => `/v1/threads/${f.thread.id}` },
  {
    method: "PATCH",
    label: "/v1/threads/:id",
    path: (f) => `/v1/threads/${f.thread.id}`,
    body: () => ({ context: "changed" })
  },
  { method: "DELETE", label: "/v1/threads/:id", path: (f) => `/v1/threads/${f.thread.id}` },
  { method: "GET", label: "/v1/bands", path: () => "/v1/bands" }
]

/** Ways of presenting no usable key. `key: null` means no Authorization header from the client helper. */
const badCredentials: ReadonlyArray<{ readonly name: string; readonly headers: Record<string, string> }> = [
  { name: "no Authorization header", headers: {} },
  { name: "unknown key", headers: { authorization: "Bearer unknown_key" } },
  { name: "Basic scheme", headers: { authorization: "Basic xyz" } },
  { name: "Basic scheme carrying a valid key", headers: { authorization: `Basic ${TestServer.Keys.a}` } },
  { name: "Bearer with an empty token", headers: { authorization: "Bearer " } },
  { name: "Bearer alone", headers: { authorization: "Bearer" } },
  { name: "key with spaces", headers: { authorization: "Bearer sk_test acme_prod" } },
  { name: "key with illegal characters", headers: { authorization: "Bearer sk_test_<acme>;prod" } },
  { name: "valid key with a trailing illegal character", headers: { authorization: `Bearer ${TestServer.Keys.a}!` } }
]

TestServer.suite()("authentication", (it) => {
  it.effect.each(authenticatedRoutes)(
    "$method $label rejects every bad credential with 401 invalid_api_key",
    (route) =>
      Effect.gen(function*() {
        const api = yield* TestServer.TestApi
        const fixture = yield* makeFixture
        const path = route.path(fixture)
        const body = route.body?.(fixture)
        for (const credential of badCredentials) {
          const reply = yield* api.request(route.method, path, {
            key: null,
            headers: credential.headers,
            ...(body === undefined ? {} : { body })
          })
          assert.strictEqual(reply.status, 401, `${route.method} ${path} with ${credential.name}: ${reply.text}`)
          yield* TestServer.expectError(reply, 401, "authentication_error", "invalid_api_key")
        }
        // Nothing was changed by the rejected requests.
        const agent = yield* TestServer.expectOk(
          yield* api.request("GET", `/v1/agents/${fixture.agent.id}`),
          200,
          Agent
        )
        assert.deepStrictEqual(agent, fixture.agent)
        const thread = yield* TestServer.expectOk(
          yield* api.request("GET", `/v1/threads/${fixture.thread.id}`),
          200,
          Thread
        )
        assert.deepStrictEqual(thread, fixture.thread)
        // And the same route works with a good key (the 401 was about the key, not the route).
        const ok = yield* api.request(route.method, path, {
          key: TestServer.Keys.a,
          ...(body === undefined ? {} : { body })
        })
        assert.isTrue(
          ok.status >= 200 && ok.status < 300,
          `${route.method} ${path} with key a: ${ok.status} ${ok.text}`
        )
      })
  )

  it.effect("an unknown key of valid shape is 401 before any lookup (never 403 or 404)", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const fixture = yield* makeFixture
      const reply = yield* api.request("GET", `/v1/agents/${fixture.agent.id}`, { key: "sk_test_acme_prod_revoked" })
      yield* TestServer.expectError(reply, 401, "authentication_error", "invalid_api_key")
      const missing = yield* api.request("GET", "/v1/agents/agent_doesnotexist", { key: "sk_unknown" })
      yield* TestServer.expectError(missing, 401, "authentication_error", "invalid_api_key")
    }))

  it.effect("the error message does not echo the presented key", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const reply = yield* api.request("GET", "/v1/agents", { key: "sk_secret_value_123" })
      const error = yield* TestServer.expectError(reply, 401, "authentication_error", "invalid_api_key")
      assert.notInclude(error.message, "sk_secret_value_123")
      assert.notInclude(reply.text, "sk_secret_value_123")
    }))
})

interface Attempt {
  readonly name: string
  readonly method: string
  readonly path: (f: Fixture) => string
  readonly body?: (f: Fixture) => unknown
}

/** Every route that addresses key a's resources by id. */
const addressedRoutes: ReadonlyArray<Attempt> = [
  { name: "GET agent", method: "GET", path: (f) => `/v1/agents/${f.agent.id}` },
  {
    name: "PATCH agent",
    method: "PATCH",
    path: (f) => `/v1/agents/${f.agent.id}`,
    body: () => ({ context: "hijacked", metadata: { owner: "x" } })
  },
  { name: "DELETE agent", method: "DELETE", path: (f) => `/v1/agents/${f.agent.id}` },
  { name: "GET thread", method: "GET", path: (f) => `/v1/threads/${f.thread.id}` },
  {
    name: "PATCH thread",
    method: "PATCH",
    path: (f) => `/v1/threads/${f.thread.id}`,
    body: () => ({ context: "hijacked", metadata: { owner: "x" } })
  },
  { name: "DELETE thread", method: "DELETE", path: (f) => `/v1/threads/${f.thread.id}` },
  { name: "list threads of the agent", method: "GET", path: (f) => `/v1/threads?agentId=${f.agent.id}` },
  {
    name: "create a thread on the agent",
    method: "POST",
    path: () => "/v1/threads",
    body: (f) => ({ agentId: f.agent.id })
  }
]

const others = otherTenants

/** Every id-addressed route tried by every other tenant. */
const attempts = addressedRoutes.flatMap((attempt) =>
  others.map((other) => ({ attempt, other, label: `${attempt.name} with ${other.name}` }))
)

const ThreadPage = Page(Thread)
const AgentPage = Page(Agent)

/** Re-reads key a's resources and checks nothing changed (and nothing was added to the agent). */
const expectUnchanged = (fixture: Fixture, context: string) =>
  Effect.gen(function*() {
    const api = yield* TestServer.TestApi
    const agent = yield* TestServer.expectOk(
      yield* api.request("GET", `/v1/agents/${fixture.agent.id}`, { key: TestServer.Keys.a }),
      200,
      Agent
    )
    assert.deepStrictEqual(agent, fixture.agent, `agent changed after ${context}`)
    const thread = yield* TestServer.expectOk(
      yield* api.request("GET", `/v1/threads/${fixture.thread.id}`, { key: TestServer.Keys.a }),
      200,
      Thread
    )
    assert.deepStrictEqual(thread, fixture.thread, `thread changed after ${context}`)
    const threads = yield* TestServer.expectOk(
      yield* api.request("GET", `/v1/threads?agentId=${fixture.agent.id}`, { key: TestServer.Keys.a }),
      200,
      ThreadPage
    )
    assert.deepStrictEqual(
      threads.data.map((t) => t.id),
      [fixture.thread.id],
      `threads of the agent changed after ${context}`
    )
  })

TestServer.suite()("workspace isolation", (it) => {
  it.effect.each(attempts)(
    "$label is 403 permission_denied and changes nothing",
    ({ attempt, other }) =>
      Effect.gen(function*() {
        const api = yield* TestServer.TestApi
        const fixture = yield* makeFixture
        const body = attempt.body?.(fixture)
        const reply = yield* api.request(attempt.method, attempt.path(fixture), {
          key: other.key,
          ...(body === undefined ? {} : { body })
        })
        const error = yield* expectDenied(reply)
        assert.notInclude(reply.text, "owned by a", "the 403 must not leak the resource")
        assert.isString(error.message)
        yield* expectUnchanged(fixture, `${attempt.name} with ${other.name}`)
      })
  )

  it.effect("every id-addressed route, tried in turn by keys b and c, leaves the resources intact", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const fixture = yield* makeFixture
      for (const other of others) {
        for (const attempt of addressedRoutes) {
          const body = attempt.body?.(fixture)
          const reply = yield* api.request(attempt.method, attempt.path(fixture), {
            key: other.key,
            ...(body === undefined ? {} : { body })
          })
          assert.strictEqual(reply.status, 403, `${attempt.name} with ${other.name}: ${reply.text}`)
        }
      }
      yield* expectUnchanged(fixture, "all attempts")
    }))

  it.effect("lists are per workspace: key a's agents are not listed for keys b or c", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const fixture = yield* makeFixture
      const mine = yield* TestServer.expectOk(
        yield* api.request("GET", "/v1/agents?limit=100", { key: TestServer.Keys.a }),
        200,
        AgentPage
      )
      assert.isTrue(mine.data.some((a) => a.id === fixture.agent.id), "key a lists its own agent")

      const bAgent = yield* Collection.agents.create({ context: "owned by b" }, TestServer.Keys.b)
      for (const other of others) {
        const theirs = yield* TestServer.expectOk(
          yield* api.request("GET", "/v1/agents?limit=100", { key: other.key }),
          200,
          AgentPage
        )
        assert.isFalse(theirs.data.some((a) => a.id === fixture.agent.id), `${other.name} must not list key a's agent`)
      }
      const bList = yield* TestServer.expectOk(
        yield* api.request("GET", "/v1/agents?limit=100", { key: TestServer.Keys.b }),
        200,
        AgentPage
      )
      assert.isTrue(bList.data.some((a) => a.id === bAgent.id), "key b lists its own agent")
      const cList = yield* TestServer.expectOk(
        yield* api.request("GET", "/v1/agents?limit=100", { key: TestServer.Keys.c }),
        200,
        AgentPage
      )
      assert.isFalse(cList.data.some((a) => a.id === bAgent.id), "key c must not list key b's agent")
      const aList = yield* TestServer.expectOk(
        yield* api.request("GET", "/v1/agents?limit=100", { key: TestServer.Keys.a }),
        200,
        AgentPage
      )
      assert.isFalse(aList.data.some((a) => a.id === bAgent.id), "key a must not list key b's agent")
      for (const agent of aList.data) assert.notStrictEqual(agent.context[0]?.content, "owned by b")
    }))

  it.effect("Idempotency-Key replays never cross workspaces or organizations", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const idempotencyKey = "idem-isolation-1"
      const body = { context: "idempotent create by a" }
      const headers = { "idempotency-key": idempotencyKey }
      const first = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", { key: TestServer.Keys.a, body, headers }),
        200,
        Agent
      )
      const replay = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", { key: TestServer.Keys.a, body, headers }),
        200,
        Agent
      )
      assert.strictEqual(replay.id, first.id, "key a's own retry replays")
      for (const other of others) {
        const theirs = yield* TestServer.expectOk(
          yield* api.request("POST", "/v1/agents", { key: other.key, body, headers }),
          200,
          Agent
        )
        assert.notStrictEqual(theirs.id, first.id, `${other.name} must not receive key a's agent as a replay`)
        // The agent it got is its own.
        yield* TestServer.expectOk(yield* api.request("GET", `/v1/agents/${theirs.id}`, { key: other.key }), 200, Agent)
      }
      // Same key, different body, from another tenant: its own create, not a conflict with key a's record.
      const differentBody = yield* api.request("POST", "/v1/agents", {
        key: TestServer.Keys.c,
        body: { context: "different body" },
        headers: { "idempotency-key": "idem-isolation-2" }
      })
      assert.strictEqual(differentBody.status, 200, differentBody.text)
      yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", {
          key: TestServer.Keys.a,
          body: { context: "a's body" },
          headers: { "idempotency-key": "idem-isolation-3" }
        }),
        200,
        Agent
      )
      const crossConflict = yield* api.request("POST", "/v1/agents", {
        key: TestServer.Keys.c,
        body: { context: "c's body" },
        headers: { "idempotency-key": "idem-isolation-3" }
      })
      assert.strictEqual(
        crossConflict.status,
        200,
        `key c must not see key a's idempotency record: ${crossConflict.text}`
      )
    }))

  it.effect("a thread created by key b on its own agent is invisible to key a", () =>
    Effect.gen(function*() {
      const bAgent = yield* Collection.agents.create({ context: "owned by b" }, TestServer.Keys.b)
      const bThread = yield* Collection.threads.create({ agentId: bAgent.id }, TestServer.Keys.b)
      yield* expectDenied(yield* Collection.threads.get(bThread.id, TestServer.Keys.a))
      yield* expectDenied(yield* Collection.agents.get(bAgent.id, TestServer.Keys.a))
      const still = yield* Collection.threads.read(bThread.id, TestServer.Keys.b)
      assert.strictEqual(still.id, bThread.id)
    }))
})

TestServer.suite()("X-Request-Id", (it) => {
  it.effect("every response carries a fresh req_ id: 2xx, errors, /healthz, docs and unknown routes", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const fixture = yield* makeFixture
      const requests: ReadonlyArray<
        {
          readonly method: string
          readonly path: string
          readonly options?: TestServer.RequestOptions
          readonly status: number
        }
      > = [
        { method: "GET", path: "/healthz", options: { key: null }, status: 200 },
        { method: "GET", path: "/healthz", options: { key: null }, status: 200 },
        { method: "GET", path: "/v1/openapi.json", options: { key: null }, status: 200 },
        { method: "GET", path: "/v1/agents", status: 200 },
        { method: "GET", path: "/v1/agents", status: 200 },
        { method: "POST", path: "/v1/agents", options: { body: { context: "x" } }, status: 200 },
        { method: "POST", path: "/v1/agents/validate", options: { body: {} }, status: 200 },
        { method: "GET", path: `/v1/agents/${fixture.agent.id}`, status: 200 },
        {
          method: "PATCH",
          path: `/v1/threads/${fixture.thread.id}`,
          options: { body: { metadata: { k: "v" } } },
          status: 200
        },
        { method: "GET", path: "/v1/bands", status: 200 },
        { method: "POST", path: "/v1/threads", options: { body: { agentId: fixture.agent.id } }, status: 201 },
        { method: "GET", path: "/v1/agents", options: { key: null }, status: 401 },
        { method: "GET", path: "/v1/agents", options: { key: "unknown_key" }, status: 401 },
        { method: "GET", path: `/v1/agents/${fixture.agent.id}`, options: { key: TestServer.Keys.b }, status: 403 },
        { method: "GET", path: "/v1/agents/agent_doesnotexist", status: 404 },
        { method: "GET", path: "/v1/nothing", status: 404 },
        { method: "GET", path: "/nothing/at/all", options: { key: null }, status: 404 },
        { method: "PUT", path: "/v1/agents", status: 405 },
        {
          method: "POST",
          path: "/v1/agents",
          options: { rawBody: "{", headers: { "content-type": "application/json" } },
          status: 400
        },
        { method: "GET", path: "/v1/agents?limit=0", status: 400 }
      ]
      const seen: Array<string> = []
      for (const r of requests) {
        const reply = yield* api.request(r.method, r.path, r.options)
        assert.strictEqual(reply.status, r.status, `${r.method} ${r.path}: ${reply.text.slice(0, 300)}`)
        const id = reply.headers.get("x-request-id")
        assert.isNotNull(id, `${r.method} ${r.path} (${reply.status}) has no X-Request-Id`)
        assert.match(id ?? "", RequestIdShape, `${r.method} ${r.path} (${reply.status})`)
        seen.push(id ?? "")
      }
      // The HTML reference page (not JSON, so fetched directly).
      for (let i = 0; i < 2; i++) {
        const docs = yield* Effect.promise(() => fetch(`${api.url}/docs`))
        yield* Effect.promise(() => docs.text())
        assert.strictEqual(docs.status, 200)
        const id = docs.headers.get("x-request-id")
        assert.match(id ?? "", RequestIdShape, "GET /docs")
        seen.push(id ?? "")
      }
      assert.strictEqual(new Set(seen).size, seen.length, "request ids are unique per request")
    }))

  it.effect("the same request sent twice gets two different ids", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const ids: Array<string | null> = []
      for (let i = 0; i < 20; i++) {
        const reply = yield* api.request("GET", "/healthz", { key: null })
        assert.strictEqual(reply.status, 200)
        assert.deepStrictEqual(reply.json, { status: "ok" })
        ids.push(reply.headers.get("x-request-id"))
      }
      for (const id of ids) assert.match(id ?? "", RequestIdShape)
      assert.strictEqual(new Set(ids).size, ids.length)
    }))

  it.effect("an error's request_id equals its X-Request-Id", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const reply = yield* api.request("GET", "/v1/agents", { key: null })
      const error = yield* TestServer.expectError(reply, 401, "authentication_error", "invalid_api_key")
      assert.strictEqual(error.request_id, reply.headers.get("x-request-id"))
      assert.match(error.request_id, RequestIdShape)
    }))
})

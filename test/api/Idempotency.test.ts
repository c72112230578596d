import { assert, layer } from "@effect/vitest"
import { Clock, Deferred, Duration, Effect, Fiber, Layer, Redacted, Ref, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Agent } from "../../domain/Agent.ts"
import { Page } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { Thread, ThreadCreated } from "../../domain/Thread.ts"
import { ApiServiceUnavailable, fromDomain } from "../../http/ErrorEnvelope.ts"
import { Idempotency, type IdempotentRequest } from "../../src/access/Idempotency.ts"
import * as Database from "../../src/store/Database.ts"
import * as Migrations from "../../src/store/Migrations.ts"
import * as Collection from "../support/Collection.ts"
import { testDatabase } from "../support/TestDatabase.ts"
import * as TestServer from "../support/TestServer.ts"

const AgentPage = Page(Agent)
const ThreadPage = Page(Thread)

const idem = (key: string) => ({ "idempotency-key": key })

const { create: createAgent } = Collection.agents

const listThreads = (agentId: string, key: string = TestServer.Keys.a) =>
  Effect.gen(function*() {
    const page = yield* TestServer.expectOk(
      yield* TestServer.request("GET", `/v1/threads?agentId=${agentId}&limit=100`, { key }),
      200,
      ThreadPage
    )
    return page.data
  })

/** The agents of the key's workspace carrying metadata marker = value. */
const agentsMarked = (value: string, key: string = TestServer.Keys.a) =>
  Effect.gen(function*() {
    const page = yield* TestServer.expectOk(
      yield* TestServer.request("GET", "/v1/agents?limit=100", { key }),
      200,
      AgentPage
    )
    assert.isFalse(page.hasMore, "too many agents for this check")
    return page.data.filter((a) => a.metadata["marker"] === value)
  })

TestServer.suite()("idempotency over HTTP", (it) => {
  it.effect("POST /v1/threads: a replay returns the first thread with created: false", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const body = { agentId: agent.id, context: "ctx", timeZone: "Europe/Paris", metadata: { m: "1" } }
      const firstReply = yield* api.request("POST", "/v1/threads", { body, headers: idem("thread-replay") })
      const first = yield* TestServer.expectOk(firstReply, 201, ThreadCreated)
      assert.isTrue(first.created)

      const replayReply = yield* api.request("POST", "/v1/threads", { body, headers: idem("thread-replay") })
      const replay = yield* TestServer.expectOk(replayReply, 201, ThreadCreated)
      assert.deepStrictEqual(replay, { ...first, created: false })
      assert.deepStrictEqual(replayReply.json, { ...first, created: false })

      // Again, later: still the same thread.
      yield* TestClock.adjust("1 second")
      const again = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", { body, headers: idem("thread-replay") }),
        201,
        ThreadCreated
      )
      assert.deepStrictEqual(again, { ...first, created: false })

      const threads = yield* listThreads(agent.id)
      assert.deepStrictEqual(threads.map((t) => t.id), [first.id])
    }))

  it.effect("POST /v1/agents: a replay returns the first agent with the same status", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const body = { context: "agent ctx", band: "lite", metadata: { marker: "agent-replay" } }
      const firstReply = yield* api.request("POST", "/v1/agents", { body, headers: idem("agent-replay") })
      const first = yield* TestServer.expectOk(firstReply, 200, Agent)
      const replayReply = yield* api.request("POST", "/v1/agents", { body, headers: idem("agent-replay") })
      const replay = yield* TestServer.expectOk(replayReply, 200, Agent)
      assert.deepStrictEqual(replay, first)
      assert.deepStrictEqual(replayReply.json, firstReply.json)
      const marked = yield* agentsMarked("agent-replay")
      assert.deepStrictEqual(marked.map((a) => a.id), [first.id])
    }))

  it.effect("the same body with keys in another order is the same request", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const first = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", {
          body: { agentId: agent.id, band: "lite", metadata: { a: "1", b: "2" } },
          headers: idem("thread-order")
        }),
        201,
        ThreadCreated
      )
      const replay = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", {
          body: { metadata: { b: "2", a: "1" }, band: "lite", agentId: agent.id },
          headers: idem("thread-order")
        }),
        201,
        ThreadCreated
      )
      assert.deepStrictEqual(replay, { ...first, created: false })
    }))

  it.effect("requests without a key are never deduplicated", () =>
    Effect.gen(function*() {
      const agent = yield* createAgent()
      const a = yield* Collection.threads.create({ agentId: agent.id })
      const b = yield* Collection.threads.create({ agentId: agent.id })
      assert.notStrictEqual(a.id, b.id)
      assert.isTrue(a.created)
      assert.isTrue(b.created)
      assert.strictEqual((yield* listThreads(agent.id)).length, 2)
    }))

  it.effect("the same key with a different body is 409 idempotency_key_conflict", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const first = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id }, headers: idem("thread-conflict") }),
        201,
        ThreadCreated
      )
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", {
          body: { agentId: agent.id, band: "lite" },
          headers: idem("thread-conflict")
        }),
        409,
        "api_error",
        "idempotency_key_conflict"
      )
      // The conflict left the original record alone.
      const replay = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id }, headers: idem("thread-conflict") }),
        201,
        ThreadCreated
      )
      assert.deepStrictEqual(replay, { ...first, created: false })
      assert.deepStrictEqual((yield* listThreads(agent.id)).map((t) => t.id), [first.id])

      const agentBody = { context: "one", metadata: { marker: "agent-conflict" } }
      const firstAgent = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", { body: agentBody, headers: idem("agent-conflict") }),
        200,
        Agent
      )
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/agents", {
          body: { ...agentBody, context: "two" },
          headers: idem("agent-conflict")
        }),
        409,
        "api_error",
        "idempotency_key_conflict"
      )
      assert.deepStrictEqual((yield* agentsMarked("agent-conflict")).map((a) => a.id), [firstAgent.id])
    }))

  it.effect("keys are scoped per route: the same key on /v1/agents and /v1/threads do not collide", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", {
          body: { metadata: { marker: "per-route" } },
          headers: idem("shared-route")
        }),
        200,
        Agent
      )
      const thread = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id }, headers: idem("shared-route") }),
        201,
        ThreadCreated
      )
      assert.isTrue(thread.created)
    }))

  it.effect("keys are scoped per workspace (same organization)", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const body = { context: "scoped", metadata: { marker: "scoped-b" } }
      const inProd = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", { body, headers: idem("ws-scope") }),
        200,
        Agent
      )
      const inStaging = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", { body, headers: idem("ws-scope"), key: TestServer.Keys.b }),
        200,
        Agent
      )
      assert.notStrictEqual(inStaging.id, inProd.id)
      assert.deepStrictEqual((yield* agentsMarked("scoped-b")).map((a) => a.id), [inProd.id])
      assert.deepStrictEqual((yield* agentsMarked("scoped-b", TestServer.Keys.b)).map((a) => a.id), [inStaging.id])

      // Threads: another workspace's different body under the same key is not a conflict.
      const prodAgent = yield* createAgent()
      const stagingAgent = yield* createAgent({}, TestServer.Keys.b)
      const prodThread = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", { body: { agentId: prodAgent.id }, headers: idem("ws-thread") }),
        201,
        ThreadCreated
      )
      const stagingThread = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", {
          body: { agentId: stagingAgent.id },
          headers: idem("ws-thread"),
          key: TestServer.Keys.b
        }),
        201,
        ThreadCreated
      )
      assert.isTrue(stagingThread.created)
      assert.strictEqual(stagingThread.agentId, stagingAgent.id)
      assert.notStrictEqual(stagingThread.id, prodThread.id)
    }))

  it.effect("keys are scoped per workspace (another organization's workspace with the same name)", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      // Keys.a is org_acme/prod, Keys.c is org_globex/prod.
      const body = { context: "scoped", metadata: { marker: "scoped-c" } }
      const acme = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", { body, headers: idem("org-scope") }),
        200,
        Agent
      )
      const globex = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", { body, headers: idem("org-scope"), key: TestServer.Keys.c }),
        200,
        Agent
      )
      assert.notStrictEqual(globex.id, acme.id)
    }))

  it.effect("a failed request is not remembered: the same key can be retried", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const missing = { agentId: "agent_doesnotexist" }
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", { body: missing, headers: idem("retry-404") }),
        404,
        "not_found",
        "agent_not_found"
      )
      // Same body: the same failure again (not a replay, not 503).
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", { body: missing, headers: idem("retry-404") }),
        404,
        "not_found",
        "agent_not_found"
      )
      // A different body under the same key is not a conflict: nothing was stored.
      const agent = yield* createAgent()
      const created = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id }, headers: idem("retry-404") }),
        201,
        ThreadCreated
      )
      assert.isTrue(created.created)
      const replay = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id }, headers: idem("retry-404") }),
        201,
        ThreadCreated
      )
      assert.deepStrictEqual(replay, { ...created, created: false })
      // And now the first body conflicts.
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", { body: missing, headers: idem("retry-404") }),
        409,
        "api_error",
        "idempotency_key_conflict"
      )
    }))

  it.effect("a rejected (400 / 403) request is not remembered either", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const invalid = yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", {
          body: { agentId: agent.id, timeZone: "Mars/Base" },
          headers: idem("retry-400")
        }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      assert.strictEqual(invalid.details?.["field"], "timeZone")
      const fixed = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", {
          body: { agentId: agent.id, timeZone: "Europe/Paris" },
          headers: idem("retry-400")
        }),
        201,
        ThreadCreated
      )
      assert.isTrue(fixed.created)

      const staging = yield* createAgent({}, TestServer.Keys.b)
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", { body: { agentId: staging.id }, headers: idem("retry-403") }),
        403,
        "permission_error",
        "permission_denied"
      )
      const own = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id }, headers: idem("retry-403") }),
        201,
        ThreadCreated
      )
      assert.isTrue(own.created)

      const agentRefused = yield* TestServer.expectError(
        yield* api.request("POST", "/v1/agents", { body: { band: "frontier" }, headers: idem("retry-agent") }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      assert.strictEqual(agentRefused.details?.["field"], "band")
      const agentOk = yield* TestServer.expectOk(
        yield* api.request("POST", "/v1/agents", { body: { band: "lite" }, headers: idem("retry-agent") }),
        200,
        Agent
      )
      assert.strictEqual(agentOk.band, "lite")
    }))
})

/**
 * The server of the retention test reads the wall time from the test's
 * TestClock but sleeps on the live clock. On the plain TestClock, advancing
 * 24 hours wakes the cluster runner's one-second pollers tens of thousands of
 * times (minutes of real time); here `TestClock.adjust` only moves "now".
 */
const wallTimeFromTestClock = (testClock: TestClock.TestClock): Clock.Clock => {
  const live = Clock.Clock.defaultValue()
  return {
    currentTimeMillisUnsafe: () => testClock.currentTimeMillisUnsafe(),
    currentTimeMillis: testClock.currentTimeMillis,
    currentTimeNanosUnsafe: () => testClock.currentTimeNanosUnsafe(),
    currentTimeNanos: testClock.currentTimeNanos,
    monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: live.monotonicTimeNanos,
    sleep: (duration) => live.sleep(duration)
  }
}

const ServerOnTestWallTime = Layer.unwrap(
  TestClock.testClockWith((testClock) =>
    Effect.succeed(TestServer.layer().pipe(Layer.provide(Layer.succeed(Clock.Clock)(wallTimeFromTestClock(testClock)))))
  )
)

TestServer.suiteWith(ServerOnTestWallTime)("idempotency retention (24 hours)", (it) => {
  it.effect("a key is replayed for 24 hours, then forgotten", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const body = { agentId: agent.id, metadata: { n: "1" } }
      const post = api.request("POST", "/v1/threads", { body, headers: idem("expiring") })
      const first = yield* TestServer.expectOk(yield* post, 201, ThreadCreated)
      assert.isTrue(first.created)
      assert.strictEqual(first.createdAt, "1970-01-01T00:00:00.000Z")

      yield* TestClock.adjust(Duration.sum(Duration.hours(23), Duration.minutes(59)))
      const stillThere = yield* TestServer.expectOk(yield* post, 201, ThreadCreated)
      assert.deepStrictEqual(stillThere, { ...first, created: false })
      // A different body still conflicts while the record is retained.
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id }, headers: idem("expiring") }),
        409,
        "api_error",
        "idempotency_key_conflict"
      )

      // 24 hours and 1 ms after the first request.
      yield* TestClock.adjust(Duration.sum(Duration.minutes(1), Duration.millis(1)))
      const fresh = yield* TestServer.expectOk(yield* post, 201, ThreadCreated)
      assert.isTrue(fresh.created)
      assert.notStrictEqual(fresh.id, first.id)
      assert.strictEqual(fresh.createdAt, "1970-01-02T00:00:00.001Z")

      // The new record is replayed in turn.
      const replay = yield* TestServer.expectOk(yield* post, 201, ThreadCreated)
      assert.deepStrictEqual(replay, { ...fresh, created: false })

      const ids = (yield* listThreads(agent.id)).map((t) => t.id)
      assert.deepStrictEqual(ids, [fresh.id, first.id])
    }))
})

// ---- service level: a request still in flight ------------------------------------

const IdempotencyLive = Layer.unwrap(
  Effect.map(testDatabase, (db) =>
    Idempotency.layer.pipe(
      Layer.provide(Migrations.layer),
      Layer.provideMerge(Database.layerUrl(Redacted.make(db.url)))
    ))
)

const Value = Schema.Struct({ n: Schema.Number })
const replayable = { schema: Value, status: 201 }

const prod: Principal = { keyId: "key_1", organizationId: "org_1", workspaceId: "prod" }
const staging: Principal = { keyId: "key_2", organizationId: "org_1", workspaceId: "staging" }
const otherOrgProd: Principal = { keyId: "key_3", organizationId: "org_2", workspaceId: "prod" }

const request = (key: string, body: unknown, principal: Principal = prod): IdempotentRequest => ({
  principal,
  method: "POST",
  path: "/v1/things",
  key,
  body
})

/** Waits for `started`, or fails at once if the fiber ended without starting its effect. */
const awaitStarted = <A, E>(started: Deferred.Deferred<void>, fiber: Fiber.Fiber<A, E>) =>
  Effect.raceFirst(
    Deferred.await(started),
    Effect.flatMap(
      Fiber.await(fiber),
      (exit) => Effect.die(new Error(`the first request ended early: ${String(exit)}`))
    )
  )

layer(IdempotencyLive, { timeout: 60_000 })("idempotency service", (it) => {
  it.effect("a replay while the first request is in flight is 503 service_unavailable", () =>
    Effect.gen(function*() {
      const idempotency = yield* Idempotency
      const runs = yield* Ref.make(0)
      const started = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const slow = Effect.gen(function*() {
        yield* Ref.update(runs, (n) => n + 1)
        yield* Deferred.succeed(started, undefined)
        yield* Deferred.await(gate)
        return { n: 1 }
      })
      const fiber = yield* Effect.forkChild(idempotency.run(request("K", { a: 1 }), replayable, slow))
      yield* awaitStarted(started, fiber)

      const counted = Effect.as(Ref.update(runs, (n) => n + 1), { n: 2 })
      const pending = yield* Effect.flip(idempotency.run(request("K", { a: 1 }), replayable, counted))
      assert.strictEqual(pending._tag, "Unavailable")
      assert.strictEqual(pending.code, "service_unavailable")
      // Over HTTP that is a 503 api_error envelope.
      const wire = fromDomain(pending, "req_test")
      assert.instanceOf(wire, ApiServiceUnavailable)
      assert.deepStrictEqual(
        { type: wire.error.type, code: wire.error.code, request_id: wire.error.request_id },
        { type: "api_error", code: "service_unavailable", request_id: "req_test" }
      )

      // A different body under the pending key is a conflict, not a wait.
      const conflict = yield* Effect.flip(idempotency.run(request("K", { a: 2 }), replayable, counted))
      assert.strictEqual(conflict._tag, "Conflict")
      assert.strictEqual(conflict.code, "idempotency_key_conflict")

      // Another workspace (same organization, or same name in another organization) is not blocked by it.
      assert.deepStrictEqual(yield* idempotency.run(request("K", { a: 1 }, staging), replayable, counted), { n: 2 })
      assert.deepStrictEqual(yield* idempotency.run(request("K", { a: 1 }, otherOrgProd), replayable, counted), {
        n: 2
      })
      assert.strictEqual(yield* Ref.get(runs), 3)

      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual(yield* Fiber.join(fiber), { n: 1 })

      const replayed = yield* idempotency.run(request("K", { a: 1 }), replayable, counted)
      assert.deepStrictEqual(replayed, { n: 1 })
      assert.strictEqual(yield* Ref.get(runs), 3)
    }))

  it.effect("onReplay shapes the replayed value only", () =>
    Effect.gen(function*() {
      const idempotency = yield* Idempotency
      const Flagged = Schema.Struct({ n: Schema.Number, created: Schema.Boolean })
      const options = { schema: Flagged, status: 201, onReplay: (v: typeof Flagged.Type) => ({ ...v, created: false }) }
      const first = yield* idempotency.run(request("flag", {}), options, Effect.succeed({ n: 7, created: true }))
      assert.deepStrictEqual(first, { n: 7, created: true })
      const second = yield* idempotency.run(request("flag", {}), options, Effect.succeed({ n: 8, created: true }))
      assert.deepStrictEqual(second, { n: 7, created: false })
    }))

  it.effect("a failed request releases its key", () =>
    Effect.gen(function*() {
      const idempotency = yield* Idempotency
      const failure = yield* Effect.flip(
        idempotency.run(request("fails", { a: 1 }), replayable, Effect.fail("boom" as const))
      )
      assert.strictEqual(failure, "boom")
      assert.deepStrictEqual(yield* idempotency.run(request("fails", { a: 1 }), replayable, Effect.succeed({ n: 3 })), {
        n: 3
      })
      assert.deepStrictEqual(yield* idempotency.run(request("fails", { a: 1 }), replayable, Effect.succeed({ n: 4 })), {
        n: 3
      })
    }))

  it.effect("an interrupted request releases its key", () =>
    Effect.gen(function*() {
      const idempotency = yield* Idempotency
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.forkChild(
        idempotency.run(
          request("interrupted", { a: 1 }),
          replayable,
          Effect.andThen(Deferred.succeed(started, undefined), Effect.never)
        )
      )
      yield* awaitStarted(started, fiber)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(
        yield* idempotency.run(request("interrupted", { a: 1 }), replayable, Effect.succeed({ n: 5 })),
        { n: 5 }
      )
    }))

  it.effect("a record is kept 24 hours, then the key runs afresh", () =>
    Effect.gen(function*() {
      const idempotency = yield* Idempotency
      assert.deepStrictEqual(yield* idempotency.run(request("aging", { a: 1 }), replayable, Effect.succeed({ n: 1 })), {
        n: 1
      })
      yield* TestClock.adjust("24 hours")
      // Exactly 24 hours later: still retained.
      assert.deepStrictEqual(yield* idempotency.run(request("aging", { a: 1 }), replayable, Effect.succeed({ n: 2 })), {
        n: 1
      })
      const conflict = yield* Effect.flip(
        idempotency.run(request("aging", { a: 2 }), replayable, Effect.succeed({ n: 2 }))
      )
      assert.strictEqual(conflict.code, "idempotency_key_conflict")
      yield* TestClock.adjust("1 millis")
      // Expired: a different body is accepted and runs.
      assert.deepStrictEqual(yield* idempotency.run(request("aging", { a: 2 }), replayable, Effect.succeed({ n: 3 })), {
        n: 3
      })
      assert.deepStrictEqual(yield* idempotency.run(request("aging", { a: 2 }), replayable, Effect.succeed({ n: 4 })), {
        n: 3
      })
    }))

  it.effect("a request without a key is never remembered", () =>
    Effect.gen(function*() {
      const idempotency = yield* Idempotency
      const noKey: IdempotentRequest = { principal: prod, method: "POST", path: "/v1/things", key: undefined, body: {} }
      assert.deepStrictEqual(yield* idempotency.run(noKey, replayable, Effect.succeed({ n: 1 })), { n: 1 })
      assert.deepStrictEqual(yield* idempotency.run(noKey, replayable, Effect.succeed({ n: 2 })), { n: 2 })
    }))
})

/**
 * Rate limits and quotas over a real HTTP listener on real PostgreSQL, with
 * TestClock driving refills and quota periods: request rates per API key and
 * per organization (429 rate_limit_error / rate_limited, Retry-After,
 * RateLimit-* headers), the cap on active runs per workspace (429
 * rate_limit_error / quota_exceeded, exactly the cap admitted among parallel
 * starts), and the spend quota per organization (429 insufficient_quota before
 * a start; terminalReason insufficient_quota between steps).
 */
import { assert } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { RunReceipt } from "../../domain/Run.ts"
import { noLimits } from "../../src/access/LimitsConfig.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, firstDataOf, getRun, send, startRun, streamOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"

const json = { accept: "application/json" }

const rateHeaders = (reply: TestServer.Reply) => ({
  limit: reply.headers.get("ratelimit-limit"),
  remaining: reply.headers.get("ratelimit-remaining"),
  reset: reply.headers.get("ratelimit-reset")
})

TestServer.suite({
  limits: { ...noLimits, keyRate: { perSecond: 1, burst: 3 }, orgRate: { perSecond: 2, burst: 5 } }
})("request rates", (it) => {
  it.effect("a key over its bucket is 429 rate_limit_error / rate_limited with Retry-After; every answer carries RateLimit-*; a second refills a token", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const bands = () => api.request("GET", "/v1/bands", { key: TestServer.Keys.c })
      const seen = []
      for (let i = 0; i < 3; i++) {
        const reply = yield* bands()
        assert.strictEqual(reply.status, 200)
        seen.push(rateHeaders(reply))
      }
      // The key's bucket (3, 1/s) is tighter than the organization's (5, 2/s): its state is shown.
      assert.deepStrictEqual(seen, [
        { limit: "3", remaining: "2", reset: "1" },
        { limit: "3", remaining: "1", reset: "2" },
        { limit: "3", remaining: "0", reset: "3" }
      ])
      const refused = yield* bands()
      const error = yield* TestServer.expectError(refused, 429, "rate_limit_error", "rate_limited")
      assert.include(error.message, "this API key")
      assert.strictEqual(refused.headers.get("retry-after"), "1")
      assert.deepStrictEqual(rateHeaders(refused), { limit: "3", remaining: "0", reset: "3" })
      // Errors of endpoints carry the headers too; unauthenticated routes and refused keys are not limited.
      yield* TestClock.adjust("1 second")
      const missing = yield* api.request("GET", "/v1/agents/agent_0000000000000000000000", { key: TestServer.Keys.c })
      yield* TestServer.expectError(missing, 404, "not_found", "agent_not_found")
      assert.deepStrictEqual(rateHeaders(missing), { limit: "3", remaining: "0", reset: "3" })
      const health = yield* api.request("GET", "/healthz", { key: null })
      assert.strictEqual(health.status, 200)
      assert.isNull(health.headers.get("ratelimit-limit"))
      const badKey = yield* api.request("GET", "/v1/bands", { key: "sk_nobody" })
      yield* TestServer.expectError(badKey, 401, "authentication_error", "invalid_api_key")
      assert.isNull(badKey.headers.get("ratelimit-limit"))
      // The refused request took no token: one second later there is one again.
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* bands()).status, 200)
      assert.strictEqual((yield* bands()).status, 429)
    }))

  it.effect("the keys of one organization share its bucket: when it is empty, every key of it is refused", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const get = (key: string) => api.request("GET", "/v1/bands", { key })
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* get(TestServer.Keys.a)).status, 200)
      const fourth = yield* get(TestServer.Keys.b)
      assert.deepStrictEqual(rateHeaders(fourth), { limit: "5", remaining: "1", reset: "2" })
      assert.strictEqual((yield* get(TestServer.Keys.b)).status, 200)
      const refused = yield* get(TestServer.Keys.b)
      const error = yield* TestServer.expectError(refused, 429, "rate_limit_error", "rate_limited")
      assert.include(error.message, "this organization")
      assert.notInclude(error.message, "this API key")
      // The organization refills 2 tokens a second: half a second gives one.
      assert.strictEqual(refused.headers.get("retry-after"), "1")
      assert.deepStrictEqual(rateHeaders(refused), { limit: "5", remaining: "0", reset: "3" })
      yield* TestClock.adjust("500 millis")
      assert.strictEqual((yield* get(TestServer.Keys.b)).status, 200)
    }))
})

TestServer.suite({ limits: { ...noLimits, maxActiveRunsPerWorkspace: 2 } })("active runs per workspace", (it) => {
  it.effect("of five parallel starts with a cap of two, exactly two run and three are 429 quota_exceeded; a busy thread is still 409; a slot frees when a run ends", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate", transport: "http", url: gate.url })
      const agent = yield* Collection.agents.create({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const threads = yield* Effect.forEach([1, 2, 3, 4, 5], () => Collection.threads.create({ agentId: agent.id }))
      const replies = yield* Effect.forEach(
        threads,
        (thread) =>
          api.request("POST", `/v1/threads/${thread.id}/messages`, {
            body: { input: "/tool mcp__gate__wait {}\n/text done" },
            headers: json
          }),
        { concurrency: "unbounded" }
      )
      const started = replies.filter((r) => r.status === 200)
      const refused = replies.filter((r) => r.status !== 200)
      assert.strictEqual(started.length, 2)
      assert.strictEqual(refused.length, 3)
      for (const reply of refused) {
        yield* TestServer.expectError(reply, 429, "rate_limit_error", "quota_exceeded")
        assert.strictEqual(reply.headers.get("retry-after"), "1")
      }
      const receipts = yield* Effect.forEach(started, (r) => TestServer.expectOk(r, 200, RunReceipt))

      // The cap is per workspace: another workspace of the organization still starts runs.
      const other = yield* agentWithThread({}, {}).pipe(Effect.provideService(TestServer.TestApi, {
        ...api,
        request: (method, path, options) => api.request(method, path, { ...options, key: TestServer.Keys.b })
      }))
      const elsewhere = yield* api.request("POST", `/v1/threads/${other.thread.id}/messages`, {
        key: TestServer.Keys.b,
        body: { input: "hello" },
        headers: json
      })
      assert.strictEqual(elsewhere.status, 200)

      // A message to a thread whose run is active is held as before (busy wins over the cap).
      const busy = yield* api.request("POST", `/v1/threads/${receipts[0].threadId}/messages`, {
        body: { input: "later" },
        headers: json
      })
      const held = yield* TestServer.expectError(busy, 409, "api_error", "thread_busy")
      assert.strictEqual(held.details?.["queued"], true)
      yield* api.request("DELETE", `/v1/runs/${receipts[0].runId}/followups/${String(held.details?.["followup_id"])}`)

      yield* gate.open
      yield* Effect.forEach(receipts, (r) => streamOf(r.runId), { discard: true })
      const again = yield* startRun(threads[4].id, { input: "hello" })
      yield* streamOf(again.runId)
      assert.strictEqual((yield* getRun(again.runId)).status, "completed")
    }).pipe(Effect.scoped))

  it.effect("parked runs hold no slot: with two runs waiting for input, a third starts", () =>
    Effect.gen(function*() {
      const question = `/tool ask_question ${
        JSON.stringify({ title: "Pick", questions: [{ id: "q", prompt: "Which?" }] })
      }`
      const agent = yield* Collection.agents.create({ capabilities: { userInteraction: true } })
      const threads = yield* Effect.forEach([1, 2, 3], () => Collection.threads.create({ agentId: agent.id }))
      for (const thread of threads.slice(0, 2)) {
        const { runId } = yield* send(thread.id, question)
        assert.strictEqual((yield* getRun(runId)).status, "waiting_for_input")
      }
      const third = yield* startRun(threads[2].id, { input: "hello" })
      yield* streamOf(third.runId)
      assert.strictEqual((yield* getRun(third.runId)).status, "completed")
    }))
})

TestServer.suite({
  routePrices: "scripted=1000/1000",
  limits: { ...noLimits, spendQuotas: new Map([["org_acme", { cents: 10, period: "day" as const }]]) },
  // The clock moves to the next UTC day: scheduled recovery passes every 6 hours, not thousands of them.
  recoveryIntervalMs: 6 * 60 * 60 * 1000
})("spend quota", (it) => {
  it.effect("a run that spends the quota ends with insufficient_quota; the next start is 429 insufficient_quota until the next UTC day", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* agentWithThread()
      const receipt = yield* startRun(thread.id, { input: "/steps 4" })
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: "insufficient_quota" })
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.terminalReason, "insufficient_quota")
      assert.strictEqual(run.usage?.steps, 1)
      assert.isAtLeast(run.usage?.costCents ?? 0, 10)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-usage"), run.usage)

      const refused = yield* api.request("POST", "/v1/runs", { body: { threadId: thread.id, input: "again" } })
      const error = yield* TestServer.expectError(refused, 429, "insufficient_quota", "insufficient_quota")
      assert.include(error.message, "10 cents per day")
      const now = yield* Clock.currentTimeMillis
      const dayMs = 86_400_000
      assert.strictEqual(refused.headers.get("retry-after"), String(Math.ceil((dayMs - (now % dayMs)) / 1000)))
      const streamed = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, { body: { input: "again" } })
      yield* TestServer.expectError(streamed, 429, "insufficient_quota", "insufficient_quota")

      // Another organization has no quota; the next UTC day renews this one.
      const globex = yield* api.request("GET", "/v1/bands", { key: TestServer.Keys.c })
      assert.strictEqual(globex.status, 200)
      yield* TestClock.adjust(dayMs - (now % dayMs))
      const renewed = yield* startRun(thread.id, { input: "hello" })
      yield* streamOf(renewed.runId)
      assert.strictEqual((yield* getRun(renewed.runId)).terminalReason, null)
    }))
})

/**
 * Tool approval hooks (spec 4.10, 5.2, 6.1, 7, 8): registration, reads,
 * updates, secret rotation, deletion guarded by agent references, isolation,
 * and the `test` route, whose signed synthetic review is received and
 * verified by a real HTTP server in the test (with Stripe's verifier, as a
 * customer would).
 */
import { assert } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Deleted, Page } from "../../domain/Page.ts"
import { HookTestResult, ToolApprovalHook } from "../../domain/ToolApprovalHook.ts"
import * as Collection from "../support/Collection.ts"
import * as HookServer from "../support/HookServer.ts"
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

const { nowIso, parseJson, request } = TestServer

const hooksPath = Collection.toolApprovalHooks.path

const HookPage = Page(ToolApprovalHook)
const HookDeleted = Deleted("tool_approval_hook")

const origin = Effect.map(HookServer.HookServer, (s) => s.origin)

/** A registration body pointing at the test's hook server. */
const hookBody = (overrides: Record<string, unknown> = {}) =>
  Effect.map(origin, (o) => ({ name: "review", url: `${o}/hooks/review`, secret: "whsec_first", ...overrides }))

const createHook = (overrides: Record<string, unknown> = {}, key?: string) =>
  Effect.flatMap(hookBody(overrides), (body) => Collection.toolApprovalHooks.create(body, key))

/** No response ever carries the signing secret. */
const assertNoSecret = (reply: TestServer.Reply, ...secrets: ReadonlyArray<string>) => {
  for (const secret of secrets) assert.notInclude(reply.text, secret, reply.text)
  assert.notInclude(reply.text, "\"secret\"", reply.text)
}

/** Runs the test route and returns its reply together with the request the hook server received. */
const runTest = (id: string, key: string = TestServer.Keys.a) =>
  Effect.gen(function*() {
    const server = yield* HookServer.HookServer
    const before = (yield* server.received).length
    const sentAt = yield* Clock.currentTimeMillis
    const reply = yield* request("POST", `${hooksPath}/${id}/test`, { key })
    const received = yield* server.awaitRequest(before + 1)
    assert.strictEqual((yield* server.received).length, before + 1, "exactly one delivery per test call")
    return { reply, received, sentAt }
  })

const { header, verify } = HookServer

const verificationError = (received: HookServer.Received, secret: string, receivedAtMs: number): string => {
  try {
    verify(received, secret, receivedAtMs)
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
  return assert.fail("verification should have failed")
}

const ReviewBody = Schema.Struct({
  type: Schema.Literal("tool_execution_review"),
  id: Schema.String,
  runId: Schema.String,
  rootRunId: Schema.String,
  threadId: Schema.String,
  agentId: Schema.String,
  stepNumber: Schema.Number,
  toolName: Schema.String,
  toolCallId: Schema.String,
  input: Schema.Record(Schema.String, Schema.Unknown),
  preview: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  resolveUrl: Schema.String
})

const reviewFields = [
  "type",
  "id",
  "runId",
  "rootRunId",
  "workerRef",
  "threadId",
  "agentId",
  "stepNumber",
  "toolName",
  "toolCallId",
  "input",
  "preview",
  "resolveUrl"
]

/** Asserts every header and the body of one synthetic review, verifying the signature. */
const checkDelivery = (received: HookServer.Received, path: string, secret: string, sentAtMs: number) =>
  Effect.gen(function*() {
    assert.strictEqual(received.method, "POST")
    assert.strictEqual(received.path, path)
    assert.match(header(received, "content-type"), /^application\/json/)
    const t = Math.floor(sentAtMs / 1000)
    const signature = header(received, "svc-signature")
    assert.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/)
    assert.strictEqual(signature.split(",")[0], `t=${t}`)
    assert.strictEqual(header(received, "svc-timestamp"), String(t))
    assert.match(header(received, "svc-request-id"), /^req_[0-9A-Za-z]+$/)

    assert.deepStrictEqual(verify(received, secret, sentAtMs), parseJson(received.body))

    const json = parseJson(received.body)
    const body = yield* Schema.decodeUnknownEffect(ReviewBody)(json).pipe(Effect.orDie)
    const keys = Object.keys(
      yield* Schema.decodeUnknownEffect(Schema.Record(Schema.String, Schema.Unknown))(json).pipe(Effect.orDie)
    )
    for (const key of keys) assert.include(reviewFields, key, `unexpected field ${key}`)
    assert.notProperty(json, "workerRef", "a synthetic review is not a worker call")
    assert.match(body.id, /^tar_[0-9A-Za-z]+$/)
    assert.match(body.runId, /^run_[0-9A-Za-z]+$/)
    assert.match(body.rootRunId, /^run_[0-9A-Za-z]+$/)
    assert.match(body.threadId, /^thread_[0-9A-Za-z]+$/)
    assert.match(body.agentId, /^agent_[0-9A-Za-z]+$/)
    assert.match(body.toolCallId, /^tc_[0-9A-Za-z]+$/)
    assert.isAbove(body.toolName.length, 0)
    assert.isTrue(Number.isInteger(body.stepNumber))
    assert.strictEqual(body.resolveUrl, `http://svc.test/v1/interactions/${body.id}/resolve`)
    return body
  })

const expectHookFailure = (reply: TestServer.Reply, ...mentions: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const error = yield* TestServer.expectError(reply, 502, "api_error", "service_unavailable")
    assert.isAbove(error.message.length, 0)
    for (const mention of mentions) assert.include(error.message, mention, reply.text)
    return error
  })

const TestLayer = Layer.merge(TestServer.layer(), HookServer.HookServer.layer)

/** Every route that addresses a hook by id. */
const routes = resourceRoutes(hooksPath, { name: "renamed" }, [["rotate-secret", { secret: "whsec_rotated" }], [
  "test"
]])

// ---- the routes on one shared server ----------------------------------------

TestServer.suiteWith(TestLayer)("tool approval hooks", (it) => {
  it.effect("POST answers 200 with every default resolved and never returns the secret", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 second")
      const now = yield* nowIso
      const body = yield* hookBody()
      const reply = yield* request("POST", hooksPath, { body })
      const hook = yield* TestServer.expectOk(reply, 200, ToolApprovalHook)
      assert.match(hook.id, /^hook_[0-9A-Za-z]+$/)
      assert.deepStrictEqual(reply.json, {
        id: hook.id,
        object: "tool_approval_hook",
        name: "review",
        url: body.url,
        enabled: true,
        onHookError: "deny",
        requestTimeoutMs: 790_000,
        metadata: {},
        configVersion: 1,
        createdAt: now,
        updatedAt: now
      })
      assertNoSecret(reply, "whsec_first")
      assert.match(reply.headers.get("x-request-id") ?? "", /^req_/)

      const read = yield* request("GET", `${hooksPath}/${hook.id}`)
      assert.strictEqual(read.status, 200)
      assert.deepStrictEqual(read.json, reply.json)
      assertNoSecret(read, "whsec_first")
    }))

  it.effect("POST echoes every field it is given", () =>
    Effect.gen(function*() {
      const body = yield* hookBody({
        name: "gatekeeper",
        enabled: false,
        onHookError: "pause",
        requestTimeoutMs: 15_000,
        metadata: { team: "sec", env: "prod" }
      })
      const reply = yield* request("POST", hooksPath, { body })
      const hook = yield* TestServer.expectOk(reply, 200, ToolApprovalHook)
      assert.deepStrictEqual(reply.json, {
        id: hook.id,
        object: "tool_approval_hook",
        name: "gatekeeper",
        url: body.url,
        enabled: false,
        onHookError: "pause",
        requestTimeoutMs: 15_000,
        metadata: { team: "sec", env: "prod" },
        configVersion: 1,
        createdAt: hook.createdAt,
        updatedAt: hook.createdAt
      })
      assertNoSecret(reply, "whsec_first")
      assert.strictEqual((yield* createHook({ onHookError: "fail-run" })).onHookError, "fail-run")
      assert.strictEqual((yield* createHook({ onHookError: "deny" })).onHookError, "deny")
      assert.isTrue((yield* createHook({ enabled: true })).enabled)
    }))

  it.effect("requestTimeoutMs defaults to and is capped at 790000; null means the default", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* createHook({ requestTimeoutMs: 790_000 })).requestTimeoutMs, 790_000)
      assert.strictEqual((yield* createHook({ requestTimeoutMs: null })).requestTimeoutMs, 790_000)
      assert.strictEqual((yield* createHook({ requestTimeoutMs: 1 })).requestTimeoutMs, 1)
      const over = yield* request("POST", hooksPath, { body: yield* hookBody({ requestTimeoutMs: 790_001 }) })
      yield* expectInvalid(over, "requestTimeoutMs")
      const huge = yield* request("POST", hooksPath, { body: yield* hookBody({ requestTimeoutMs: 10_000_000 }) })
      yield* expectInvalid(huge, "requestTimeoutMs")

      const hook = yield* createHook({ requestTimeoutMs: 1_000 })
      const overPatch = yield* request("PATCH", `${hooksPath}/${hook.id}`, { body: { requestTimeoutMs: 790_001 } })
      yield* expectInvalid(overPatch, "requestTimeoutMs")
      const patched = yield* request("PATCH", `${hooksPath}/${hook.id}`, { body: { requestTimeoutMs: null } })
      assert.strictEqual((yield* TestServer.expectOk(patched, 200, ToolApprovalHook)).requestTimeoutMs, 790_000)
    }))

  it.effect("POST refuses a missing secret, an unknown onHookError and missing name or url", () =>
    Effect.gen(function*() {
      const before =
        (yield* TestServer.expectOk(yield* request("GET", `${hooksPath}?limit=100`), 200, HookPage)).data.length
      const { secret: _secret, ...withoutSecret } = yield* hookBody()
      yield* expectInvalid(yield* request("POST", hooksPath, { body: withoutSecret }), "secret")
      yield* expectInvalid(
        yield* request("POST", hooksPath, { body: yield* hookBody({ onHookError: "other" }) }),
        "onHookError"
      )
      const { name: _name, ...withoutName } = yield* hookBody()
      yield* expectInvalid(yield* request("POST", hooksPath, { body: withoutName }), "name")
      const { url: _url, ...withoutUrl } = yield* hookBody()
      yield* expectInvalid(yield* request("POST", hooksPath, { body: withoutUrl }), "url")
      const after =
        (yield* TestServer.expectOk(yield* request("GET", `${hooksPath}?limit=100`), 200, HookPage)).data.length
      assert.strictEqual(after, before, "nothing was registered")
    }))

  it.effect("with private URLs allowed (the test configuration) loopback http URLs register; a non-URL does not", () =>
    Effect.gen(function*() {
      const o = yield* origin
      assert.strictEqual((yield* createHook({ url: `${o}/x` })).url, `${o}/x`)
      const port = new URL(o).port
      assert.strictEqual((yield* createHook({ url: `http://localhost:${port}/x` })).url, `http://localhost:${port}/x`)
      yield* expectInvalid(
        yield* request("POST", hooksPath, { body: yield* hookBody({ url: "not a url" }) }),
        "url",
        "url_not_allowed"
      )
      yield* expectInvalid(
        yield* request("POST", hooksPath, { body: yield* hookBody({ url: "ftp://127.0.0.1/x" }) }),
        "url",
        "url_not_allowed"
      )
      const hook = yield* createHook()
      yield* expectInvalid(
        yield* request("PATCH", `${hooksPath}/${hook.id}`, { body: { url: "not a url" } }),
        "url",
        "url_not_allowed"
      )
    }))

  it.effect("GET lists the workspace's hooks in pages", () =>
    Effect.gen(function*() {
      // The globex workspace is otherwise empty of hooks.
      const key = TestServer.Keys.c
      const created = [
        yield* createHook({ name: "h1" }, key),
        yield* createHook({ name: "h2" }, key),
        yield* createHook({ name: "h3" }, key)
      ]
      const first = yield* TestServer.expectOk(yield* request("GET", `${hooksPath}?limit=2`, { key }), 200, HookPage)
      assert.strictEqual(first.object, "list")
      assert.strictEqual(first.limit, 2)
      assert.strictEqual(first.data.length, 2)
      assert.isTrue(first.hasMore)
      assert.isString(first.nextCursor)
      const second = yield* TestServer.expectOk(
        yield* request("GET", `${hooksPath}?limit=2&cursor=${encodeURIComponent(first.nextCursor ?? "")}`, { key }),
        200,
        HookPage
      )
      assert.strictEqual(second.data.length, 1)
      assert.isFalse(second.hasMore)
      assert.isNull(second.nextCursor)
      assert.sameMembers([...first.data, ...second.data].map((h) => h.id), created.map((h) => h.id))
      assert.deepStrictEqual(
        [...first.data, ...second.data].find((h) => h.id === created[0].id),
        created[0]
      )
      const listReply = yield* request("GET", hooksPath, { key })
      assertNoSecret(listReply, "whsec_first")
    }))

  it.effect("PATCH updates fields, merges metadata, bumps configVersion on structural changes and keeps the rest", () =>
    Effect.gen(function*() {
      const hook = yield* createHook({ metadata: { a: "1", b: "2" } })
      yield* TestClock.adjust("2 seconds")
      const now = yield* nowIso
      const o = yield* origin
      const reply = yield* request("PATCH", `${hooksPath}/${hook.id}`, {
        body: {
          name: "renamed",
          url: `${o}/other`,
          enabled: false,
          onHookError: "fail-run",
          requestTimeoutMs: 2_000,
          metadata: { a: null, c: "3" }
        }
      })
      const patched = yield* TestServer.expectOk(reply, 200, ToolApprovalHook)
      assert.deepStrictEqual(reply.json, {
        id: hook.id,
        object: "tool_approval_hook",
        name: "renamed",
        url: `${o}/other`,
        enabled: false,
        onHookError: "fail-run",
        requestTimeoutMs: 2_000,
        metadata: { b: "2", c: "3" },
        configVersion: hook.configVersion + 1,
        createdAt: hook.createdAt,
        updatedAt: now
      })
      assertNoSecret(reply, "whsec_first")
      assert.deepStrictEqual((yield* request("GET", `${hooksPath}/${hook.id}`)).json, reply.json)

      // An empty patch changes nothing structural.
      const empty = yield* TestServer.expectOk(
        yield* request("PATCH", `${hooksPath}/${hook.id}`, { body: {} }),
        200,
        ToolApprovalHook
      )
      assert.strictEqual(empty.configVersion, patched.configVersion)
      assert.strictEqual(empty.name, "renamed")
      assert.strictEqual(empty.url, `${o}/other`)

      // A single structural field bumps configVersion again.
      const again = yield* TestServer.expectOk(
        yield* request("PATCH", `${hooksPath}/${hook.id}`, { body: { onHookError: "pause" } }),
        200,
        ToolApprovalHook
      )
      assert.strictEqual(again.configVersion, patched.configVersion + 1)
      assert.strictEqual(again.onHookError, "pause")
      assert.isFalse(again.enabled)

      yield* expectInvalid(
        yield* request("PATCH", `${hooksPath}/${hook.id}`, { body: { onHookError: "other" } }),
        "onHookError"
      )
    }))

  it.effect("test: an allow answer is 200 { delivered, latencyMs, decision } and the delivery is signed and well-formed", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      yield* TestClock.adjust("90 seconds")
      const o = yield* origin
      const hook = yield* createHook({ url: `${o}/hooks/review?tenant=acme`, secret: "whsec_signing" })
      yield* server.answerWith(HookServer.reply(200, { decision: "allow" }))
      const { reply, received, sentAt } = yield* runTest(hook.id)
      const result = yield* TestServer.expectOk(reply, 200, HookTestResult)
      assert.deepStrictEqual(reply.json, { delivered: true, latencyMs: result.latencyMs, decision: "allow" })
      assert.isTrue(Number.isFinite(result.latencyMs))
      assert.isAtLeast(result.latencyMs, 0)
      yield* checkDelivery(received, "/hooks/review?tenant=acme", "whsec_signing", sentAt)
    }))

  it.effect("test: the signature fails with a wrong secret, a tampered body, or a stale timestamp", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const hook = yield* createHook({ secret: "whsec_right" })
      yield* server.answerWith(HookServer.reply(200, { decision: "allow" }))
      const { reply, received, sentAt } = yield* runTest(hook.id)
      yield* TestServer.expectOk(reply, 200, HookTestResult)
      verify(received, "whsec_right", sentAt)
      assert.include(verificationError(received, "whsec_wrong", sentAt), "No signatures found")
      assert.include(verificationError(received, "whsec_righ", sentAt), "No signatures found")
      const tampered = { ...received, body: received.body.replace("tool_execution_review", "tool_execution_reviev") }
      assert.include(verificationError(tampered, "whsec_right", sentAt), "No signatures found")
      assert.include(
        verificationError(received, "whsec_right", sentAt + 301_000),
        "Timestamp outside the tolerance zone"
      )
    }))

  it.effect("test: deny and pause answers are echoed with their reason", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const hook = yield* createHook({ secret: "whsec_decisions" })

      yield* server.answerWith(HookServer.reply(200, { decision: "deny", reason: "r" }))
      const deny = yield* runTest(hook.id)
      const denied = yield* TestServer.expectOk(deny.reply, 200, HookTestResult)
      assert.deepStrictEqual(deny.reply.json, {
        delivered: true,
        latencyMs: denied.latencyMs,
        decision: "deny",
        reason: "r"
      })
      yield* checkDelivery(deny.received, "/hooks/review", "whsec_decisions", deny.sentAt)

      yield* server.answerWith(HookServer.reply(200, { decision: "pause", reason: "needs a human" }))
      const pause = yield* runTest(hook.id)
      const paused = yield* TestServer.expectOk(pause.reply, 200, HookTestResult)
      assert.deepStrictEqual(pause.reply.json, {
        delivered: true,
        latencyMs: paused.latencyMs,
        decision: "pause",
        reason: "needs a human"
      })

      yield* server.answerWith(HookServer.reply(200, { decision: "deny" }))
      const bare = yield* runTest(hook.id)
      const bareResult = yield* TestServer.expectOk(bare.reply, 200, HookTestResult)
      assert.deepStrictEqual(bare.reply.json, { delivered: true, latencyMs: bareResult.latencyMs, decision: "deny" })

      // Any 2xx acknowledges.
      yield* server.answerWith(HookServer.reply(201, { decision: "allow" }))
      const created = yield* runTest(hook.id)
      assert.strictEqual((yield* TestServer.expectOk(created.reply, 200, HookTestResult)).decision, "allow")
    }))

  it.effect("test: a non-2xx answer is 502 service_unavailable", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const hook = yield* createHook()
      yield* server.answerWith(HookServer.reply(500, { error: "boom" }))
      yield* expectHookFailure((yield* runTest(hook.id)).reply, "500")
      // Even a valid decision does not count when the status is not 2xx.
      yield* server.answerWith(HookServer.reply(503, { decision: "allow" }))
      yield* expectHookFailure((yield* runTest(hook.id)).reply, "503")
      yield* server.answerWith(HookServer.reply(404, { decision: "allow" }))
      yield* expectHookFailure((yield* runTest(hook.id)).reply, "404")
    }))

  it.effect("test: a body that is not a valid decision is 502 service_unavailable", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const hook = yield* createHook()
      const garbage: ReadonlyArray<HookServer.Answer> = [
        HookServer.replyText(200, "this is not json"),
        HookServer.replyText(200, "<html>ok</html>", "text/html"),
        HookServer.replyText(200, ""),
        HookServer.reply(200, { decision: "maybe" }),
        HookServer.reply(200, { decision: "ALLOW" }),
        HookServer.reply(200, {}),
        HookServer.reply(200, ["allow"]),
        HookServer.reply(200, "allow"),
        HookServer.reply(200, { decision: "deny", reason: 42 })
      ]
      for (const answer of garbage) {
        yield* server.answerWith(answer)
        yield* expectHookFailure((yield* runTest(hook.id)).reply, "decision")
      }
    }))

  it.effect("test: an unreachable hook is 502 service_unavailable", () =>
    Effect.gen(function*() {
      const port = yield* TestServer.freePort
      const hook = yield* createHook({ url: `http://127.0.0.1:${port}/hook` })
      const reply = yield* request("POST", `${hooksPath}/${hook.id}/test`)
      yield* expectHookFailure(reply, `127.0.0.1:${port}`)
    }))

  it.effect("test: a hook slower than requestTimeoutMs is 502 service_unavailable once the timeout passes", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const hook = yield* createHook({ requestTimeoutMs: 5_000 })
      yield* server.answerWith(HookServer.hold)
      const before = (yield* server.received).length
      const reply = yield* Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(request("POST", `${hooksPath}/${hook.id}/test`))
        // The service is now waiting on the held request, with its timeout running on the TestClock.
        yield* Effect.raceFirst(Effect.asVoid(server.awaitRequest(before + 1)), Effect.asVoid(Fiber.await(fiber)))
        yield* TestClock.adjust("5 seconds")
        return yield* Fiber.join(fiber)
      }).pipe(Effect.ensuring(server.releaseHeld))
      yield* expectHookFailure(reply, "5000")
    }))

  it.effect("rotate-secret bumps configVersion, never returns the secret, and later deliveries use the new secret", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      yield* server.answerWith(HookServer.reply(200, { decision: "allow" }))
      const hook = yield* createHook({ secret: "whsec_old" })
      const before = yield* runTest(hook.id)
      verify(before.received, "whsec_old", before.sentAt)

      yield* TestClock.adjust("3 seconds")
      const now = yield* nowIso
      const reply = yield* request("POST", `${hooksPath}/${hook.id}/rotate-secret`, { body: { secret: "whsec_new" } })
      const rotated = yield* TestServer.expectOk(reply, 200, ToolApprovalHook)
      assert.deepStrictEqual(reply.json, { ...hook, configVersion: hook.configVersion + 1, updatedAt: now })
      assertNoSecret(reply, "whsec_old", "whsec_new")
      assert.deepStrictEqual((yield* request("GET", `${hooksPath}/${hook.id}`)).json, reply.json)

      const after = yield* runTest(hook.id)
      yield* TestServer.expectOk(after.reply, 200, HookTestResult)
      verify(after.received, "whsec_new", after.sentAt)
      assert.include(verificationError(after.received, "whsec_old", after.sentAt), "No signatures found")

      const missing = yield* request("POST", `${hooksPath}/${rotated.id}/rotate-secret`, { body: {} })
      yield* expectInvalid(missing, "secret")
      assert.strictEqual(
        (yield* TestServer.expectOk(yield* request("GET", `${hooksPath}/${hook.id}`), 200, ToolApprovalHook))
          .configVersion,
        rotated.configVersion,
        "a refused rotation changes nothing"
      )
    }))

  it.effect("DELETE answers { id, object, deleted } and the hook is gone", () =>
    Effect.gen(function*() {
      const hook = yield* createHook()
      const reply = yield* request("DELETE", `${hooksPath}/${hook.id}`)
      yield* TestServer.expectOk(reply, 200, HookDeleted)
      assert.deepStrictEqual(reply.json, { id: hook.id, object: "tool_approval_hook", deleted: true })
      yield* TestServer.expectError(
        yield* request("GET", `${hooksPath}/${hook.id}`),
        404,
        "not_found",
        "tool_approval_hook_not_found"
      )
      yield* TestServer.expectError(
        yield* request("DELETE", `${hooksPath}/${hook.id}`),
        404,
        "not_found",
        "tool_approval_hook_not_found"
      )
      const page = yield* TestServer.expectOk(yield* request("GET", `${hooksPath}?limit=100`), 200, HookPage)
      assert.notInclude(page.data.map((h) => h.id), hook.id)
    }))

  it.effect("DELETE while an agent references the hook is 409 resource_in_use naming the agents", () =>
    Effect.gen(function*() {
      const hook = yield* createHook()
      const approvals = { toolExecution: { hookId: hook.id } }
      const first = yield* Collection.agents.create({ approvals })
      const second = yield* Collection.agents.create({ approvals: { ...approvals, autoAllow: ["read_file"] } })
      const blocked = yield* request("DELETE", `${hooksPath}/${hook.id}`)
      const error = yield* TestServer.expectError(blocked, 409, "api_error", "resource_in_use")
      const ids = yield* Schema.decodeUnknownEffect(Schema.Array(Schema.String))(error.details?.["inUseByAgentIds"])
        .pipe(
          Effect.orDie
        )
      assert.sameMembers([...ids], [first.id, second.id])
      yield* TestServer.expectOk(yield* request("GET", `${hooksPath}/${hook.id}`), 200, ToolApprovalHook)

      yield* Collection.agents.update(first.id, { approvals: null })
      const stillBlocked = yield* TestServer.expectError(
        yield* request("DELETE", `${hooksPath}/${hook.id}`),
        409,
        "api_error",
        "resource_in_use"
      )
      assert.deepStrictEqual(stillBlocked.details?.["inUseByAgentIds"], [second.id])

      yield* TestServer.expectOk(yield* request("DELETE", `/v1/agents/${second.id}`), 200, Deleted("agent"))
      const done = yield* request("DELETE", `${hooksPath}/${hook.id}`)
      assert.deepStrictEqual(done.json, { id: hook.id, object: "tool_approval_hook", deleted: true })
    }))

  it.effect.each(routes)(
    "an unknown id is 404 tool_approval_hook_not_found: $label",
    (route) =>
      Effect.gen(function*() {
        yield* expectNotFound(yield* call(route, "hook_doesnotexist0000000000"), "tool_approval_hook_not_found")
      })
  )

  it.effect.each(byOtherTenants(routes))(
    "another workspace's hook is 403 permission_denied and absent from its list: $label",
    ({ route, tenant }) =>
      Effect.gen(function*() {
        const server = yield* HookServer.HookServer
        const hook = yield* createHook({ name: "private" })
        const delivered = (yield* server.received).length
        yield* expectDenied(yield* call(route, hook.id, tenant.key))
        const page = yield* TestServer.expectOk(
          yield* request("GET", `${hooksPath}?limit=100`, { key: tenant.key }),
          200,
          HookPage
        )
        assert.notInclude(page.data.map((h) => h.id), hook.id)
        assert.strictEqual((yield* server.received).length, delivered, "no delivery for a foreign test call")
        const unchanged = yield* request("GET", `${hooksPath}/${hook.id}`)
        assert.deepStrictEqual(unchanged.json, hook)
      })
  )
})

/**
 * Tool approval hooks (spec 4.10, 5.2, 6.1, 7, 8): the CRUD cases every
 * registered resource shares and those of signed webhooks (CrudSuite,
 * CrudWebhooks), then the hook's own: its onHookError, and the `test` route,
 * whose signed synthetic review is received and verified by a real HTTP
 * server in the test (with Stripe's verifier, as a customer would), before
 * and after the secret is rotated.
 */
import { assert } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { HookTestResult, ToolApprovalHook } from "../../domain/ToolApprovalHook.ts"
import * as Collection from "../support/Collection.ts"
import { crudSuite } from "../support/CrudSuite.ts"
import { crudWebhooks, type WebhookResource } from "../support/CrudWebhooks.ts"
import * as HookServer from "../support/HookServer.ts"
import { resourceRoutes } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

// ---- helpers ----------------------------------------------------------------

const { parseJson, request } = TestServer

const hooksPath = Collection.toolApprovalHooks.path

const origin = Effect.map(HookServer.HookServer, (s) => s.origin)

/** A registration body pointing at the test's hook server. */
const hookBody = (overrides: Record<string, unknown> = {}) =>
  Effect.map(
    origin,
    (o) => ({ name: "review", url: `${o}/hooks/review`, secret: "whsec_first_signing_secret", ...overrides })
  )

const createHook = (overrides: Record<string, unknown> = {}, key?: string) =>
  Effect.flatMap(hookBody(overrides), (body) => Collection.toolApprovalHooks.create(body, key))

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

const hooks: WebhookResource<ToolApprovalHook, HookServer.HookServer> = {
  collection: Collection.toolApprovalHooks,
  object: "tool_approval_hook",
  idPattern: /^hook_[0-9A-Za-z]+$/,
  notFound: { code: "tool_approval_hook_not_found", id: "hook_doesnotexist0000000000" },
  routes: resourceRoutes(hooksPath, { name: "renamed" }, [
    ["rotate-secret", { secret: "whsec_rotated_signing_secret" }],
    ["test"]
  ]),
  body: hookBody,
  answer: ({ secret: _secret, ...body }) => ({
    enabled: true,
    onHookError: "deny",
    requestTimeoutMs: 790_000,
    ...body
  }),
  requestTimeout: { default: 790_000, max: 790_000 },
  update: {
    all: {
      name: "renamed",
      url: "http://127.0.0.1:4000/other",
      enabled: false,
      onHookError: "fail-run",
      requestTimeoutMs: 2_000
    },
    one: { onHookError: "pause" },
    refused: { body: { onHookError: "other" }, field: "onHookError" }
  },
  versions: {
    noop: (body) => ({ name: body["name"], url: body["url"], enabled: true, onHookError: "deny" }),
    steps: [
      { url: "http://127.0.0.1:4000/v2" },
      { name: "review-2" },
      { enabled: false },
      { onHookError: "pause" },
      { requestTimeoutMs: 5_000 }
    ]
  },
  references: {
    agents: [(id) => ({ approvals: { toolExecution: { hookId: id } } }), (id) => ({
      approvals: { toolExecution: { hookId: id }, autoAllow: ["read_file"] }
    })],
    drop: { approvals: null }
  },
  sent: Effect.flatMap(HookServer.HookServer, (server) => Effect.map(server.received, (r) => r.length)),
  full: {
    name: "gatekeeper",
    enabled: false,
    onHookError: "pause",
    requestTimeoutMs: 15_000,
    metadata: { team: "sec", env: "prod" }
  },
  refusals: [
    { label: "a missing secret", omit: "secret", field: "secret" },
    { label: "an unknown onHookError", set: { onHookError: "other" }, field: "onHookError" },
    { label: "a missing name", omit: "name", field: "name" },
    { label: "a missing url", omit: "url", field: "url" }
  ],
  refusedRotations: [{ body: {}, field: "secret" }]
}

// ---- the routes on one shared server ----------------------------------------

TestServer.suiteWith(TestLayer)("tool approval hooks", (it) => {
  crudSuite(it, hooks)
  crudWebhooks(it, hooks)

  it.effect("onHookError is deny, pause or fail-run; enabled is given or true", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* createHook({ onHookError: "pause" })).onHookError, "pause")
      assert.strictEqual((yield* createHook({ onHookError: "fail-run" })).onHookError, "fail-run")
      assert.strictEqual((yield* createHook({ onHookError: "deny" })).onHookError, "deny")
      assert.isTrue((yield* createHook({ enabled: true })).enabled)
    }))

  it.effect("test: an allow answer is 200 { delivered, latencyMs, decision } and the delivery is signed and well-formed", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      yield* TestClock.adjust("90 seconds")
      const o = yield* origin
      const hook = yield* createHook({ url: `${o}/hooks/review?tenant=acme`, secret: "whsec_delivery_signing_secret" })
      yield* server.answerWith(HookServer.reply(200, { decision: "allow" }))
      const { reply, received, sentAt } = yield* runTest(hook.id)
      const result = yield* TestServer.expectOk(reply, 200, HookTestResult)
      assert.deepStrictEqual(reply.json, { delivered: true, latencyMs: result.latencyMs, decision: "allow" })
      assert.isTrue(Number.isFinite(result.latencyMs))
      assert.isAtLeast(result.latencyMs, 0)
      yield* checkDelivery(received, "/hooks/review?tenant=acme", "whsec_delivery_signing_secret", sentAt)
    }))

  it.effect("test: the signature fails with a wrong secret, a tampered body, or a stale timestamp", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const hook = yield* createHook({ secret: "whsec_right_signing_secret" })
      yield* server.answerWith(HookServer.reply(200, { decision: "allow" }))
      const { reply, received, sentAt } = yield* runTest(hook.id)
      yield* TestServer.expectOk(reply, 200, HookTestResult)
      verify(received, "whsec_right_signing_secret", sentAt)
      assert.include(verificationError(received, "whsec_wrong", sentAt), "No signatures found")
      assert.include(verificationError(received, "whsec_right_signing_secre", sentAt), "No signatures found")
      const tampered = { ...received, body: received.body.replace("tool_execution_review", "tool_execution_reviev") }
      assert.include(verificationError(tampered, "whsec_right_signing_secret", sentAt), "No signatures found")
      assert.include(
        verificationError(received, "whsec_right_signing_secret", sentAt + 301_000),
        "Timestamp outside the tolerance zone"
      )
    }))

  it.effect("test: deny and pause answers are echoed with their reason", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const hook = yield* createHook({ secret: "whsec_decisions_signing_secret" })

      yield* server.answerWith(HookServer.reply(200, { decision: "deny", reason: "r" }))
      const deny = yield* runTest(hook.id)
      const denied = yield* TestServer.expectOk(deny.reply, 200, HookTestResult)
      assert.deepStrictEqual(deny.reply.json, {
        delivered: true,
        latencyMs: denied.latencyMs,
        decision: "deny",
        reason: "r"
      })
      yield* checkDelivery(deny.received, "/hooks/review", "whsec_decisions_signing_secret", deny.sentAt)

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

  it.effect("after rotate-secret, deliveries are signed with the new secret, no longer the old", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      yield* server.answerWith(HookServer.reply(200, { decision: "allow" }))
      const hook = yield* createHook({ secret: "whsec_old_signing_secret" })
      const before = yield* runTest(hook.id)
      verify(before.received, "whsec_old_signing_secret", before.sentAt)

      yield* TestServer.expectOk(
        yield* request("POST", `${hooksPath}/${hook.id}/rotate-secret`, {
          body: { secret: "whsec_new_signing_secret" }
        }),
        200,
        ToolApprovalHook
      )
      const after = yield* runTest(hook.id)
      yield* TestServer.expectOk(after.reply, 200, HookTestResult)
      verify(after.received, "whsec_new_signing_secret", after.sentAt)
      assert.include(verificationError(after.received, "whsec_old_signing_secret", after.sentAt), "No signatures found")
    }))
})

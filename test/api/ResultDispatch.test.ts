/**
 * ResultDispatch (spec 6.1, 4.5) at the service level, against a real
 * handler (a node:http server in the test) over the whole service: one
 * signed POST with every header and the body, the normalized answer, the
 * journal (the same request key is answered from it; the handler is not
 * called again), the timeout on TestClock, and each way a delivery fails.
 */
import { assert } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { IdGenerator } from "../../src/IdGenerator.ts"
import { type DispatchRequest, ResultDispatch } from "../../src/resultHandlers/ResultDispatch.ts"
import * as HookServer from "../support/HookServer.ts"
import {
  checkDispatch,
  createHandler,
  DispatchBody,
  png,
  receivedSince,
  requestFor
} from "../support/ResultHandlerDeliveries.ts"
import * as TestServer from "../support/TestServer.ts"

const Harness = Layer.merge(TestServer.layer(), HookServer.HookServer.layer)

/** Dispatches and returns the outcome (success or failure) with what the handler received meanwhile. */
const dispatchOnce = (request: DispatchRequest) =>
  Effect.gen(function*() {
    const before = (yield* (yield* HookServer.HookServer).received).length
    const sentAtMs = yield* Clock.currentTimeMillis
    const result = yield* Effect.result((yield* ResultDispatch).dispatch(request))
    return { result, received: yield* receivedSince(before), sentAtMs }
  })

const failureOf = <A, E>(
  result: { readonly _tag: "Success"; readonly success: A } | { readonly _tag: "Failure"; readonly failure: E }
): E =>
  result._tag === "Failure" ? result.failure : assert.fail(`expected a failure, got ${JSON.stringify(result.success)}`)

const successOf = <A, E>(
  result: { readonly _tag: "Success"; readonly success: A } | { readonly _tag: "Failure"; readonly failure: E }
): A =>
  result._tag === "Success" ? result.success : assert.fail(`expected a success, got ${JSON.stringify(result.failure)}`)

TestServer.suiteWith(Harness)("result handler dispatch", (it) => {
  it.effect("one signed POST with every 6.1 header and the body; the answer comes back normalized, then from the journal", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const ids = yield* IdGenerator
      const { handler, secret, path } = yield* createHandler()
      const request = yield* requestFor(handler.id)
      yield* server.answerWith(
        HookServer.reply(201, {
          artifactId: "a-1",
          url: "https://files.example.com/a-1",
          block: "[[a-1]]",
          metadata: { pages: 1 }
        })
      )
      const first = yield* dispatchOnce(request)
      const requestId = ids.derive("request", request.requestKey)
      assert.deepStrictEqual(successOf(first.result), {
        requestId,
        replayed: false,
        answer: {
          artifactId: "a-1",
          url: "https://files.example.com/a-1",
          ref: { block: "[[a-1]]" },
          metadata: { pages: 1 }
        }
      })
      assert.strictEqual(first.received.length, 1)
      const body = yield* checkDispatch(first.received[0], {
        path,
        secret,
        sentAtMs: first.sentAtMs,
        requestId,
        organizationId: "org_acme",
        agentId: request.agentId,
        runId: request.runId,
        handlerId: handler.id
      })
      assert.deepStrictEqual(body, {
        runId: request.runId,
        threadId: request.threadId,
        agentId: request.agentId,
        toolName: "workspace_export_artifact",
        toolCallId: "tc_0000000000000000000001",
        stepNumber: 2,
        mediaType: "image/png",
        bytes: 16,
        sha256: "0".repeat(64),
        content: { kind: "base64", base64: png, mimeType: "image/png" }
      })

      // The same logical artifact again (a re-executed step): the kept answer, and the handler is not called.
      yield* server.answerWith(HookServer.reply(200, { artifactId: "a-2" }))
      const again = yield* dispatchOnce(request)
      assert.deepStrictEqual(successOf(again.result), { ...successOf(first.result), replayed: true })
      assert.deepStrictEqual(again.received, [])

      // Another artifact of the same run is another request id, and is delivered.
      const other = yield* dispatchOnce({ ...request, requestKey: `${request.runId}:tc_0000000000000000000002:export` })
      assert.deepStrictEqual(successOf(other.result).answer, { artifactId: "a-2" })
      assert.strictEqual(other.received.length, 1)
      assert.notStrictEqual(HookServer.header(other.received[0], "svc-request-id"), requestId)
    }))

  it.effect("content as a url transfer handle goes as given", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const { handler } = yield* createHandler()
      const content = {
        kind: "url",
        url: "http://svc.test/v1/artifacts/art_1",
        mimeType: "text/csv",
        svcArtifactId: "art_1"
      } as const
      const request = yield* requestFor(handler.id, { content, mediaType: "text/csv" })
      yield* server.answerWith(HookServer.reply(200, { url: "https://files.example.com/report.csv" }))
      const { result, received } = yield* dispatchOnce(request)
      assert.deepStrictEqual(successOf(result).answer, { url: "https://files.example.com/report.csv" })
      const body = yield* Schema.decodeUnknownEffect(DispatchBody)(TestServer.parseJson(received[0].body)).pipe(
        Effect.orDie
      )
      assert.deepStrictEqual([body.mediaType, body.content], ["text/csv", content])
    }))

  it.effect("a handler slower than requestTimeoutMs fails with reason timeout once it passes; the retry keeps the request id", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const { handler } = yield* createHandler({ requestTimeoutMs: 5_000 })
      const request = yield* requestFor(handler.id)
      yield* server.answerWith(HookServer.hold)
      const before = (yield* server.received).length
      const failure = yield* Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(Effect.flip((yield* ResultDispatch).dispatch(request)))
        yield* server.awaitRequest(before + 1)
        yield* TestClock.adjust("4999 millis")
        assert.isUndefined(fiber.pollUnsafe(), "still waiting before requestTimeoutMs")
        yield* TestClock.adjust("1 millis")
        return yield* Fiber.join(fiber)
      }).pipe(Effect.ensuring(server.releaseHeld))
      assert.strictEqual(failure.reason, "timeout")
      assert.strictEqual(failure.code, "service_unavailable")
      assert.strictEqual(failure.message, `Result handler ${handler.id}: no response within 5000 ms.`)

      // A failure is not journaled: the next attempt calls the handler, with the same Svc-Request-Id.
      yield* server.answerWith(HookServer.reply(200, { artifactId: "late" }))
      const retry = yield* dispatchOnce(request)
      assert.deepStrictEqual(successOf(retry.result).answer, { artifactId: "late" })
      const [first, second] = (yield* server.received).slice(before)
      assert.strictEqual(HookServer.header(second, "svc-request-id"), HookServer.header(first, "svc-request-id"))
    }))

  it.effect("each failure is typed: non-2xx, invalid JSON, a body over 256 KiB, no artifactId for an overflow, unreachable", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const { handler } = yield* createHandler()
      const request = yield* requestFor(handler.id)
      const cases = [
        {
          answer: HookServer.reply(500, { artifactId: "x" }),
          reason: "status",
          code: "service_unavailable",
          message: `answered HTTP 500`
        },
        {
          answer: HookServer.replyText(200, "stored!"),
          reason: "invalid_response",
          code: "result_handler_response_invalid",
          message: "HTTP 200 with an invalid response: the response is not valid JSON."
        },
        {
          answer: HookServer.reply(200, { artifactId: "x", padding: "p".repeat(300 * 1024) }),
          reason: "invalid_response",
          code: "result_handler_response_invalid",
          message: "HTTP 200 with an invalid response: the response is over the limit of 262144 bytes (256 KiB)."
        },
        {
          answer: HookServer.reply(200, { ref: { block: "[[x]]" } }),
          reason: "invalid_response",
          code: "result_handler_response_invalid",
          message: "ref or block but neither artifactId nor url"
        }
      ] as const
      for (const c of cases) {
        yield* server.answerWith(c.answer)
        const failure = failureOf((yield* dispatchOnce(request)).result)
        assert.deepStrictEqual([failure.reason, failure.code], [c.reason, c.code], failure.message)
        assert.include(failure.message, c.message)
      }
      yield* server.answerWith(HookServer.reply(200, { url: "https://files.example.com/x" }))
      const overflow = failureOf((yield* dispatchOnce({ ...request, purpose: "overflow" })).result)
      assert.strictEqual(overflow.code, "result_handler_response_invalid")
      assert.include(overflow.message, "no artifactId, which oversized tool-result recovery requires")

      const port = yield* TestServer.freePort
      const gone = yield* createHandler({ url: `http://127.0.0.1:${port}/handler` })
      const unreachable = failureOf((yield* dispatchOnce({ ...request, handlerId: gone.handler.id })).result)
      assert.deepStrictEqual([unreachable.reason, unreachable.code], ["unreachable", "service_unavailable"])
      assert.include(unreachable.message, `127.0.0.1:${port}`)
    }))

  it.effect("a deleted handler, or one of another workspace, is result_handler_not_found and nothing is sent", () =>
    Effect.gen(function*() {
      const { handler } = yield* createHandler()
      const request = yield* requestFor(handler.id)
      assert.deepStrictEqual((yield* TestServer.request("DELETE", `/v1/result-handlers/${handler.id}`)).status, 200)
      const deleted = yield* dispatchOnce(request)
      const failure = failureOf(deleted.result)
      assert.deepStrictEqual([failure.reason, failure.code], ["not_found", "result_handler_not_found"])
      assert.strictEqual(
        failure.message,
        `Result handler ${handler.id}: no such result handler in this workspace (it was deleted).`
      )
      assert.deepStrictEqual(deleted.received, [])

      const foreign = yield* createHandler({}, TestServer.Keys.b)
      const other = yield* dispatchOnce({ ...request, handlerId: foreign.handler.id })
      assert.strictEqual(failureOf(other.result).code, "result_handler_not_found")
      assert.deepStrictEqual(other.received, [])
    }))
})

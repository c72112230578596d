/**
 * A run's `outputSchema` as a hostile tenant writes it, against the real
 * service with the scripted model: a backtracking pattern is validated in
 * linear time (5,000 `a`s and a `!` would hold a backtracking engine for longer
 * than the universe's age) while another organization and `/healthz` are
 * answered; the run completes without `output` and says why on the stream.
 * Schemas nested past their bounds, JSON bodies nested 10,000 levels, and
 * patterns RE2 cannot run are 400 naming the field; an answer nested past the
 * value bound is no structured value.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { MaxBodyDepth, SchemaLimits } from "../../src/tools/SchemaBudget.ts"
import { agentWithThread, dataOf, firstDataOf, getRun, startRun, streamOf } from "../support/Conversation.ts"
import { backtracking, deepJsonText, deepSchemaText, nonLinearPatterns } from "../support/SchemaBombs.ts"
import * as TestServer from "../support/TestServer.ts"

const errorsOf = (chunks: ReadonlyArray<{ readonly type: string }>) =>
  chunks.flatMap((c) => (c.type === "error" && "errorText" in c ? [c.errorText] : []))

/** POST /v1/threads/:id/messages with a raw JSON body (a deep one cannot go through JSON.stringify). */
const sendRaw = (threadId: string, rawBody: string) =>
  TestServer.request("POST", `/v1/threads/${threadId}/messages`, {
    rawBody,
    headers: { "content-type": "application/json", accept: "application/json" }
  })

// The default body limit of a deployment (the tests' is smaller): bodies 10,000 levels deep fit in it.
TestServer.suite({ maxBodyBytes: 1_048_576 })("outputSchema bounds", (it) => {
  it.effect("a backtracking pattern runs in linear time: other tenants are answered, the run completes without output and says why", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const receipt = yield* startRun(thread.id, {
        input: `/output ${JSON.stringify(backtracking.input(5_000))}`,
        outputSchema: { type: "string", pattern: backtracking.pattern }
      })
      // While the run validates its answer, another organization and the health check are served.
      const health = yield* TestServer.request("GET", "/healthz", { key: null })
      assert.strictEqual(health.status, 200)
      const other = yield* TestServer.request("GET", "/v1/agents", { key: TestServer.Keys.c })
      assert.strictEqual(other.status, 200)
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: null })
      assert.deepStrictEqual(errorsOf(chunks), [
        `No structured output: the final answer does not match outputSchema: data must match pattern "${backtracking.pattern}".`
      ])
      assert.strictEqual((yield* getRun(receipt.runId)).status, "completed")
      // The same schema with an answer that matches: the output is there.
      const good = yield* startRun(thread.id, {
        input: `/output ${JSON.stringify("aaaa")}`,
        outputSchema: { type: "string", pattern: backtracking.pattern }
      })
      assert.deepStrictEqual(dataOf((yield* streamOf(good.runId)).chunks, "data-svc-terminal"), [
        { terminalReason: null, output: "aaaa" }
      ])
    }))

  it.effect("an outputSchema nested past its bound is 400 naming it; a JSON body nested 10,000 levels is 400, not 500", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const cases = [
        {
          body: `{"input":"x","outputSchema":${deepSchemaText(10_000)}}`,
          field: "outputSchema",
          message: `Invalid request body: outputSchema is nested deeper than ${MaxBodyDepth} levels.`
        },
        {
          body: `{"input":"x","outputSchema":${deepSchemaText(SchemaLimits.maxDepth)}}`,
          field: "outputSchema",
          message: `outputSchema is nested deeper than ${SchemaLimits.maxDepth} levels.`
        },
        {
          body: `{"input":"x","metadata":${deepJsonText(10_000)}}`,
          field: "metadata",
          message: `Invalid request body: metadata is nested deeper than ${MaxBodyDepth} levels.`
        },
        {
          body: "[".repeat(20_000) + "]".repeat(20_000),
          field: "body",
          message: `Invalid request body: body is nested deeper than ${MaxBodyDepth} levels.`
        }
      ]
      for (const { body, field, message } of cases) {
        const reply = yield* sendRaw(thread.id, body)
        const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", "invalid_request_error")
        assert.strictEqual(error.details?.["field"], field)
        assert.strictEqual(error.message, message)
      }
      // Within the bounds, the same shape is accepted.
      const within = yield* sendRaw(
        thread.id,
        `{"input":"/output {}","outputSchema":${deepSchemaText(SchemaLimits.maxDepth - 1)}}`
      )
      assert.strictEqual(within.status, 200, within.text)
      // The agent routes too: a deep body is refused before it is read.
      const agent = yield* TestServer.request("POST", "/v1/agents", {
        rawBody: `{"name":"deep","context":${deepJsonText(5_000)}}`,
        headers: { "content-type": "application/json" }
      })
      const refused = yield* TestServer.expectError(agent, 400, "invalid_request_error", "invalid_request_error")
      assert.strictEqual(refused.details?.["field"], "context")
    }))

  it.effect.each(nonLinearPatterns)(
    "a pattern RE2 cannot run is 400 naming outputSchema: %s",
    (pattern) =>
      Effect.gen(function*() {
        const { thread } = yield* agentWithThread()
        const reply = yield* TestServer.request("POST", `/v1/threads/${thread.id}/messages`, {
          body: { input: "x", outputSchema: { type: "object", properties: { a: { type: "string", pattern } } } },
          headers: { accept: "application/json" }
        })
        const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", "invalid_request_error")
        assert.strictEqual(error.details?.["field"], "outputSchema")
        assert.match(error.message, /^outputSchema has a pattern the linear-time engine cannot run \(RE2: /)
      })
  )

  it.effect("an answer nested past the value bound is no structured value: the run says why", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const tree = { $ref: "#/$defs/t", $defs: { t: { type: "object", properties: { a: { $ref: "#/$defs/t" } } } } }
      const receipt = yield* startRun(thread.id, {
        input: `/output ${deepJsonText(SchemaLimits.maxValueDepth + 1)}`,
        outputSchema: tree
      })
      const { chunks } = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(firstDataOf(chunks, "data-svc-terminal"), { terminalReason: null })
      assert.deepStrictEqual(errorsOf(chunks), [
        `No structured output: the final answer does not match outputSchema: the value is nested deeper than ${SchemaLimits.maxValueDepth} levels.`
      ])
    }))
})

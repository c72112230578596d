/**
 * SVC_LOG_FORMAT=json, as a log shipper reads the process: every stdout line
 * is one JSON object; the access log line of a request carries its request id
 * (the one the client got in X-Request-Id) and the node id, the line about a
 * run's failed model call its run id; and neither the provider key nor an
 * API key appears anywhere in the output, though the provider refused the key.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Schema } from "effect"
import { Agent } from "../../../domain/Agent.ts"
import { Run } from "../../../domain/Run.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import { aimock, redactedKey } from "../../support/Aimock.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { freePort } from "../../support/TestServer.ts"

const apiKey = "sk_json_logs_0123456789"
const providerKey = "sk-operator-provider-key-0123456789"

const Line = Schema.Struct({
  timestamp: Schema.String,
  level: Schema.String,
  message: Schema.Unknown,
  node_id: Schema.optional(Schema.String),
  request_id: Schema.optional(Schema.String),
  run_id: Schema.optional(Schema.String),
  annotations: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})
const decodeLine = Schema.decodeUnknownSync(Schema.fromJsonString(Line))

describe("JSON logs", () => {
  it.live("each stdout line is a JSON object with request, run and node ids, and no key", () =>
    Effect.gen(function*() {
      const db = yield* testDatabase
      // The provider refuses the operator's key (aimock accepts only its own).
      const provider = yield* aimock((mock) => mock.onMessage("hello", { content: "never" }))
      assert.notStrictEqual(Redacted.value(redactedKey), providerKey)
      const service = yield* ServiceProcess.start({
        DATABASE_URL: db.url,
        SVC_API_KEYS: `${apiKey}:org_logs:prod`,
        SVC_MASTER_KEY: Buffer.alloc(32, 9).toString("base64"),
        SVC_LOG_FORMAT: "json",
        SVC_BAND_LITE: "openai:gpt-test",
        OPENAI_BASE_URL: `${provider.url}/v1`,
        OPENAI_API_KEY: providerKey,
        PORT: String(yield* freePort),
        SVC_RUNNER_HOST: "127.0.0.1",
        SVC_RUNNER_PORT: String(yield* freePort)
      })
      const post = (path: string, body: unknown) => ServiceProcess.request(service.url, "POST", path, apiKey, body)
      const agent = ServiceProcess.decodeJson(Agent, (yield* post("/v1/agents", { band: "lite" })).text)
      const thread = ServiceProcess.decodeJson(ThreadCreated, (yield* post("/v1/threads", { agentId: agent.id })).text)
      const sent = yield* post(`/v1/threads/${thread.id}/messages`, { input: "hello" })
      assert.strictEqual(sent.status, 200)
      const runId = sent.headers.get("svc-run-id") ?? ""
      const requestId = sent.headers.get("x-request-id") ?? ""
      const run = ServiceProcess.decodeJson(
        Run,
        (yield* ServiceProcess.request(service.url, "GET", `/v1/runs/${runId}`, apiKey)).text
      )
      assert.strictEqual(run.status, "failed")
      assert.strictEqual(
        run.error?.message,
        "The model provider is unavailable: openai:gpt-test answered HTTP 401: authentication_error: Invalid API key"
      )
      yield* ServiceProcess.stop(service)

      const raw = service.stdout().split("\n").filter((l) => l.trim() !== "")
      const lines = raw.map((l) => decodeLine(l))
      assert.isTrue(lines.length > 3)
      const nodeId = lines.find((l) => l.node_id !== undefined)?.node_id ?? ""
      assert.match(nodeId, /^node_[0-9A-Za-z]{22}$/)
      assert.isTrue(lines.every((l) => l.node_id === nodeId))
      assert.isTrue(lines.every((l) => !Number.isNaN(Date.parse(l.timestamp))))

      const access = lines.find((l) => l.request_id === requestId && l.message === "Sent HTTP response")
      assert.deepStrictEqual(access?.annotations, {
        "http.method": "POST",
        "http.route": "/v1/threads/:id/messages",
        "http.url": `/v1/threads/${thread.id}/messages`,
        "http.status": 200,
        duration_ms: access?.annotations?.["duration_ms"]
      })
      assert.strictEqual(access?.level, "INFO")
      const failed = lines.find((l) => l.run_id === runId && l.level === "WARN")
      assert.strictEqual(
        failed?.message,
        "model call failed: openai:gpt-test answered HTTP 401: authentication_error: Invalid API key"
      )

      for (const secret of [providerKey, apiKey]) assert.notInclude(service.output(), secret)
    }).pipe(Effect.scoped), 120_000)
})

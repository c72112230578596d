/**
 * `GET /metrics` (Prometheus text exposition): absent unless SVC_METRICS=on
 * (404 route_not_found, as any unknown path); with SVC_METRICS_TOKEN a scrape
 * without the token is 401 invalid_metrics_token. After known activity the
 * exposition holds exactly those counts: requests by route template and
 * status, their latency histogram (TestClock: every request takes 0 s), model
 * tokens by route, and the run gauges (one run parked on a question, one
 * message held for it).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { noTelemetry } from "../../src/config/TelemetryConfig.ts"
import { agentWithThread, getRun, send } from "../support/Conversation.ts"
import { testDatabase } from "../support/TestDatabase.ts"
import * as TestServer from "../support/TestServer.ts"

const token = "metrics-token-0123456789"
const question = {
  title: "Go on?",
  questions: [{ id: "go", prompt: "Go on?", options: [{ id: "yes", label: "Yes" }] }]
}

const scrape = (key: string | null) =>
  TestServer.request("GET", "/metrics", { key: null, headers: key === null ? {} : { authorization: `Bearer ${key}` } })

describe("/metrics", () => {
  TestServer.suite()((it) => {
    it.effect("is not served unless SVC_METRICS=on", () =>
      Effect.gen(function*() {
        yield* TestServer.expectError(yield* scrape(null), 404, "not_found", "route_not_found")
      }))
  })

  it.effect(
    "with SVC_METRICS=on and a token: refuses scrapes without it, and counts what happened",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const config = {
          ...TestServer.baseConfig(db.url, yield* TestServer.freePort),
          telemetry: { ...noTelemetry, metrics: { enabled: true, token: Option.some(Redacted.make(token)) } }
        }
        yield* Effect.gen(function*() {
          const refused = yield* scrape(null)
          const error = yield* TestServer.expectError(refused, 401, "authentication_error", "invalid_metrics_token")
          assert.strictEqual(
            error.message,
            "Missing or wrong metrics token: send 'Authorization: Bearer <SVC_METRICS_TOKEN>'."
          )
          assert.strictEqual(refused.headers.get("www-authenticate"), "Bearer")
          // An API key is not the metrics token.
          yield* TestServer.expectError(
            yield* scrape(TestServer.Keys.a),
            401,
            "authentication_error",
            "invalid_metrics_token"
          )

          // A run that completes; a run parked on a question, with a message held for it; a lookup that misses.
          const first = yield* agentWithThread()
          const done = yield* send(first.thread.id, "/text counted")
          const asking = yield* agentWithThread({ capabilities: { userInteraction: true } })
          const parked = yield* send(asking.thread.id, `/tool ask_question ${JSON.stringify(question)}`)
          assert.strictEqual((yield* getRun(parked.runId)).status, "waiting_for_input")
          const held = yield* TestServer.request("POST", `/v1/threads/${asking.thread.id}/messages`, {
            body: { input: "later" }
          })
          assert.strictEqual(held.status, 409, held.text)
          yield* TestServer.expectError(
            yield* TestServer.request("GET", "/v1/agents/agent_0000000000000000000000"),
            404,
            "not_found",
            "agent_not_found"
          )
          const usage = [(yield* getRun(done.runId)).usage, (yield* getRun(parked.runId)).usage]
          const input = usage.reduce((sum, u) => sum + (u?.inputTokens ?? 0), 0)
          const output = usage.reduce((sum, u) => sum + (u?.outputTokens ?? 0), 0)

          const reply = yield* scrape(token)
          assert.strictEqual(reply.status, 200)
          assert.strictEqual(reply.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8")
          const text = reply.text
          assert.include(
            text,
            [
              "# HELP svc_http_requests_total HTTP requests answered, by method, route template and status code.",
              "# TYPE svc_http_requests_total counter",
              `svc_http_requests_total{method="GET",route="/metrics",status="401"} 2`,
              ""
            ].join("\n")
          )
          const lines = text.split("\n")
          const route = `method="POST",route="/v1/threads/:id/messages"`
          for (
            const line of [
              `svc_http_requests_total{${route},status="200"} 2`,
              `svc_http_requests_total{${route},status="409"} 1`,
              `svc_http_requests_total{method="GET",route="/v1/agents/:id",status="404"} 1`,
              `svc_http_requests_total{method="POST",route="/v1/threads",status="201"} 2`,
              `svc_http_request_duration_seconds_bucket{${route},le="0.005"} 3`,
              `svc_http_request_duration_seconds_bucket{${route},le="10"} 3`,
              `svc_http_request_duration_seconds_bucket{${route},le="+Inf"} 3`,
              `svc_http_request_duration_seconds_sum{${route}} 0`,
              `svc_http_request_duration_seconds_count{${route}} 3`,
              "# TYPE svc_model_tokens_total counter",
              `svc_model_tokens_total{route="scripted",type="input"} ${input}`,
              `svc_model_tokens_total{route="scripted",type="output"} ${output}`
            ]
          ) assert.include(lines, line)
          // No path of a request is a label: ids never make a series of their own.
          assert.notInclude(text, asking.thread.id)
          assert.include(
            text,
            [
              "# HELP svc_runs_active Runs preparing or running, in the whole deployment.",
              "# TYPE svc_runs_active gauge",
              "svc_runs_active 0",
              "# HELP svc_runs_queued Runs accepted but not started yet, in the whole deployment.",
              "# TYPE svc_runs_queued gauge",
              "svc_runs_queued 0",
              "# HELP svc_runs_parked Runs waiting on a person, by what they wait for (approval or input), in the whole deployment.",
              "# TYPE svc_runs_parked gauge",
              `svc_runs_parked{reason="approval"} 0`,
              `svc_runs_parked{reason="input"} 1`,
              "# HELP svc_followups_held Messages held for a busy thread until its run's next turn boundary, in the whole deployment.",
              "# TYPE svc_followups_held gauge",
              "svc_followups_held 1",
              ""
            ].join("\n")
          )
        }).pipe(Effect.provide(TestServer.layerWith(config)), Effect.scoped)
      }).pipe(Effect.scoped),
    60_000
  )
})

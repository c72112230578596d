/**
 * OTLP export as a collector sees it: a real OTLP/HTTP receiver gets the
 * server span of a request (OTel HTTP conventions, named after its route),
 * the GenAI span of the run's model call in the same trace, down a complete
 * chain of parents from that request, and the request and token metrics.
 * A request carrying `traceparent` continues the caller's trace. The service
 * is stopped (its scope closed) to flush: nothing waits on a timer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { noTelemetry, type OtlpConfig } from "../../src/config/TelemetryConfig.ts"
import { agentWithThread, getRun, send } from "../support/Conversation.ts"
import * as OtlpReceiver from "../support/OtlpReceiver.ts"
import { testDatabase } from "../support/TestDatabase.ts"
import * as TestServer from "../support/TestServer.ts"

const otlpTo = (endpoint: string): OtlpConfig => ({
  endpoint,
  protocol: "http/json",
  headers: [["x-collector-token", Redacted.make("collector-token-1")]],
  serviceName: "agent-service",
  tracesExportMs: 5_000,
  metricsExportMs: 60_000
})

/** The spans from `span` up to its root, `span` first. */
const ancestry = (spans: ReadonlyArray<OtlpReceiver.ReceivedSpan>, span: OtlpReceiver.ReceivedSpan) => {
  const chain = [span]
  let parent = span.parentSpanId
  while (parent !== undefined) {
    const found = spans.find((s) => s.spanId === parent)
    if (found === undefined) break
    chain.push(found)
    parent = found.parentSpanId
  }
  return chain
}

describe("OTLP export", () => {
  it.effect(
    "a request and its run's model call reach the receiver as one trace, with HTTP and GenAI attributes",
    () =>
      Effect.gen(function*() {
        const receiver = yield* OtlpReceiver.start
        const db = yield* testDatabase
        const config = {
          ...TestServer.baseConfig(db.url, yield* TestServer.freePort),
          telemetry: { ...noTelemetry, otlp: Option.some(otlpTo(receiver.url)) }
        }
        const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
        const callerSpan = "00f067aa0ba902b7"
        // Closing the scope stops the service, which exports what is left.
        const seen = yield* Effect.gen(function*() {
          const { thread } = yield* agentWithThread()
          const { runId, parsed } = yield* send(thread.id, "/text traced")
          assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
          const run = yield* getRun(runId)
          const listed = yield* TestServer.request("GET", "/v1/agents", {
            headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` }
          })
          assert.strictEqual(listed.status, 200)
          return { threadId: thread.id, runId, usage: run.usage }
        }).pipe(Effect.provide(TestServer.layerWith(config)), Effect.scoped)

        const spans = receiver.spans()
        const server = spans.find((s) => s.name === "POST /v1/threads/:id/messages")
        assert.isDefined(server)
        assert.strictEqual(server.kind, 2)
        assert.isUndefined(server.parentSpanId)
        assert.strictEqual(server.attributes["http.request.method"], "POST")
        assert.strictEqual(server.attributes["http.route"], "/v1/threads/:id/messages")
        assert.strictEqual(server.attributes["url.path"], `/v1/threads/${seen.threadId}/messages`)
        assert.strictEqual(server.attributes["http.response.status_code"], 200)
        assert.match(String(server.attributes["svc.request_id"]), TestServer.requestIdShape)
        assert.strictEqual(server.resource["service.name"], "agent-service")
        assert.match(String(server.resource["service.instance.id"]), /^node_/)

        const chat = spans.find((s) => s.name === "chat scripted")
        assert.isDefined(chat)
        assert.strictEqual(chat.kind, 3)
        assert.deepInclude(chat.attributes, {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "scripted",
          "gen_ai.system": "scripted",
          "gen_ai.request.model": "scripted",
          "gen_ai.usage.input_tokens": seen.usage?.inputTokens ?? -1,
          "gen_ai.usage.output_tokens": seen.usage?.outputTokens ?? -1,
          "svc.run.id": seen.runId,
          "svc.run.step": 0
        })
        // One trace from the request down to the model call, through the thread and run entities.
        const chain = ancestry(spans, chat)
        assert.strictEqual(chain.at(-1)?.spanId, server.spanId)
        assert.isTrue(chain.every((s) => s.traceId === server.traceId))
        assert.deepStrictEqual(chain.map((s) => s.name), [
          "chat scripted",
          "StepLoop.run",
          "AgentLoop.execute",
          "Run.Start",
          "Run.client.Start",
          "Thread.Begin",
          "Thread.client.Begin",
          "Runs.start",
          "Runs.startStreaming",
          "POST /v1/threads/:id/messages"
        ])
        assert.isTrue(spans.some((s) => s.name === "ModelStep.run" && s.parentSpanId === chat.spanId))
        assert.strictEqual(chain.find((s) => s.name === "AgentLoop.execute")?.attributes["svc.run.id"], seen.runId)

        // A caller's traceparent makes the request part of the caller's trace.
        const listed = spans.find((s) => s.name === "GET /v1/agents")
        assert.strictEqual(listed?.traceId, callerTrace)
        assert.strictEqual(listed?.parentSpanId, callerSpan)

        // The configured headers go with every export.
        assert.isTrue(receiver.posts.length > 0)
        assert.isTrue(receiver.posts.every((p) => p.headers["x-collector-token"] === "collector-token-1"))

        // Metrics: the same counts /metrics shows.
        const metrics = receiver.metrics()
        const requests = metrics.filter((m) => m.name === "svc_http_requests_total").flatMap((m) => m.points)
        assert.deepInclude(requests, {
          attributes: { method: "POST", route: "/v1/threads/:id/messages", status: "200" },
          value: 1,
          count: undefined
        })
        const tokens = metrics.filter((m) => m.name === "svc_model_tokens_total").flatMap((m) => m.points)
        assert.deepInclude(tokens, {
          attributes: { route: "scripted", type: "input" },
          value: seen.usage?.inputTokens,
          count: undefined
        })
        assert.deepInclude(tokens, {
          attributes: { route: "scripted", type: "output" },
          value: seen.usage?.outputTokens,
          count: undefined
        })
      }).pipe(Effect.scoped),
    60_000
  )
})

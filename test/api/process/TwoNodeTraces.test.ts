/**
 * Traces across nodes, configured only by the standard OTEL_* variables and
 * exported in the default OTLP/protobuf: node A serves the API only
 * (SVC_CLUSTER_ROLE=client), so the run it accepts executes on node B. The
 * collector sees one trace: A's server span for the request, down through the
 * thread and run entity messages to B's GenAI span for the model call, each
 * span under the resource of the node that made it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Agent } from "../../../domain/Agent.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import * as OtlpReceiver from "../../support/OtlpReceiver.ts"
import { deploymentEnv, startNode } from "../../support/ProcessNodes.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"

const key = "sk_two_node_traces"

describe("traces across two nodes", () => {
  it.live(
    "a request on one node and the model call of its run on the other are one trace",
    () =>
      Effect.gen(function*() {
        const receiver = yield* OtlpReceiver.start
        const db = yield* testDatabase
        const common = {
          ...deploymentEnv(db.url, `${key}:org_traces:prod`, 6),
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_SERVICE_NAME: "agents-test",
          OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test"
        }
        const b = yield* startNode(common)
        const a = yield* startNode({ ...common, SVC_CLUSTER_ROLE: "client" })
        const post = (path: string, body: unknown) => ServiceProcess.request(a.url, "POST", path, key, body)
        const agent = ServiceProcess.decodeJson(Agent, (yield* post("/v1/agents", {})).text)
        const thread = ServiceProcess.decodeJson(
          ThreadCreated,
          (yield* post("/v1/threads", { agentId: agent.id })).text
        )
        const sent = yield* post(`/v1/threads/${thread.id}/messages`, { input: "/text across nodes" })
        assert.include(sent.text, JSON.stringify({ type: "finish", finishReason: "stop" }))
        const runId = sent.headers.get("svc-run-id") ?? ""
        // Stopping flushes what each exporter still holds.
        yield* ServiceProcess.stop(a)
        yield* ServiceProcess.stop(b)

        assert.isTrue(
          receiver.posts.filter((p) => p.path === "/v1/traces").every((p) => p.contentType === "application/x-protobuf")
        )
        const spans = receiver.spans()
        const server = spans.find((s) => s.name === "POST /v1/threads/:id/messages")
        const chat = spans.find((s) => s.name === "chat scripted" && s.attributes["svc.run.id"] === runId)
        assert.isDefined(server)
        assert.isDefined(chat)
        assert.strictEqual(chat.traceId, server.traceId)
        // Each node names itself: A took the request, B called the model.
        const nodeA = server.resource["service.instance.id"]
        const nodeB = chat.resource["service.instance.id"]
        assert.match(String(nodeA), /^node_/)
        assert.match(String(nodeB), /^node_/)
        assert.notStrictEqual(nodeA, nodeB)
        for (const span of [server, chat]) {
          assert.strictEqual(span.resource["service.name"], "agents-test")
          assert.strictEqual(span.resource["deployment.environment"], "test")
        }
        // Parent by parent, from the model call on B up to the request on A.
        const chain = [chat]
        for (let parent = chat.parentSpanId; parent !== undefined;) {
          const found = spans.find((s) => s.spanId === parent)
          if (found === undefined) break
          chain.push(found)
          parent = found.parentSpanId
        }
        assert.strictEqual(chain.at(-1)?.spanId, server.spanId)
        const nodeOf = (name: string) => chain.find((s) => s.name === name)?.resource["service.instance.id"]
        assert.strictEqual(nodeOf("Thread.client.Begin"), nodeA)
        assert.strictEqual(nodeOf("Thread.Begin"), nodeB)
        assert.strictEqual(nodeOf("AgentLoop.execute"), nodeB)
      }).pipe(Effect.scoped),
    120_000
  )
})

/**
 * Two processes on one PostgreSQL form one cluster. Node A serves the API
 * only (SVC_CLUSTER_ROLE=client), so every run it accepts lives on node B;
 * its stream still reaches a client of A completely, live and replayed, and
 * B's API serves the same run.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Run } from "../../../domain/Run.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import { callIdsOf } from "../../support/Conversation.ts"
import { gateServer } from "../../support/GateMcpServer.ts"
import { deploymentEnv, gatedAgent, startNode } from "../../support/ProcessNodes.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { parseWithAi } from "../../support/UiStream.ts"

const decode = ServiceProcess.decodeJson
const key = "sk_two_nodes"

describe("two nodes", () => {
  it.live(
    "a run whose entity lives on the other node streams completely to a client of the first",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const gate = yield* gateServer
        const common = { ...deploymentEnv(db.url, `${key}:org_two:prod`, 5), SVC_ALLOW_PRIVATE_URLS: "1" }
        const b = yield* startNode(common)
        const a = yield* startNode({ ...common, SVC_CLUSTER_ROLE: "client" })
        const post = (path: string, body: unknown) => ServiceProcess.request(a.url, "POST", path, key, body)
        const agent = yield* gatedAgent(a.url, key, gate.url)
        const thread = decode(ThreadCreated, (yield* post("/v1/threads", { agentId: agent.id })).text)
        yield* gate.open

        // The message's response on A is the live stream of a run executing on B.
        const live = yield* Effect.promise(async () => {
          const r = await fetch(`${a.url}/v1/threads/${thread.id}/messages`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ input: "/tool mcp__gate__echo {\"text\":\"across nodes\"}\n/text done" })
          })
          return { runId: r.headers.get("svc-run-id") ?? "", text: await r.text() }
        })
        const parsed = yield* Effect.orDie(parseWithAi(live.text))
        assert.deepStrictEqual(parsed.chunks.filter((c) => c.type === "tool-output-available"), [
          {
            type: "tool-output-available",
            toolCallId: callIdsOf(parsed.chunks)[0],
            output: [{ type: "text", text: "across nodes" }]
          }
        ])
        assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
        assert.deepStrictEqual(parsed.ids, parsed.chunks.map((_, i) => i + 1))

        // Replayed from either node, the stream is the same.
        const fromA = yield* ServiceProcess.request(a.url, "GET", `/v1/runs/${live.runId}/stream`, key)
        const fromB = yield* ServiceProcess.request(b.url, "GET", `/v1/runs/${live.runId}/stream`, key)
        assert.strictEqual(fromA.text, live.text)
        assert.strictEqual(fromB.text, live.text)
        const run = decode(Run, (yield* ServiceProcess.request(b.url, "GET", `/v1/runs/${live.runId}`, key)).text)
        assert.strictEqual(run.status, "completed")
        // The MCP call was made by the runner (B); A hosts no entities.
        assert.isTrue(gate.headers().some((h) => h["svc-run-id"] === live.runId))
        yield* ServiceProcess.stop(a)
        yield* ServiceProcess.stop(b)
      }).pipe(Effect.scoped),
    120_000
  )
})

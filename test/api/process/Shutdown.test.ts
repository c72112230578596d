/**
 * SIGTERM as a process (`node src/main.ts`, PostgreSQL): the service stops
 * accepting, the open event stream of a running run ends cleanly (without
 * `[DONE]`), the process exits 0, and the run is left to be resumed, not
 * cancelled: a second process picks it up and the client resumes the stream
 * there with Last-Event-ID, to its end.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Run } from "../../../domain/Run.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import { gateServer } from "../../support/GateMcpServer.ts"
import { deploymentEnv, gatedAgent, startNode } from "../../support/ProcessNodes.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { query, testDatabase } from "../../support/TestDatabase.ts"
import { frames, parseWithAi } from "../../support/UiStream.ts"

const decode = ServiceProcess.decodeJson
const key = "sk_shutdown"

describe("shutdown", () => {
  it.live(
    "SIGTERM: the stream ends cleanly, exit 0; the run resumes on another process and the stream resumes there",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const gate = yield* gateServer
        const common = { ...deploymentEnv(db.url, `${key}:org_shutdown:prod`, 7), SVC_ALLOW_PRIVATE_URLS: "1" }
        const a = yield* startNode(common)
        const post = (path: string, body: unknown) => ServiceProcess.request(a.url, "POST", path, key, body)
        const agent = yield* gatedAgent(a.url, key, gate.url)
        const thread = decode(ThreadCreated, (yield* post("/v1/threads", { agentId: agent.id })).text)

        // A run streaming on A, blocked in a tool.
        const response = yield* Effect.promise(() =>
          fetch(`${a.url}/v1/threads/${thread.id}/messages`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ input: "/tool mcp__gate__wait {}\n/text resumed" })
          })
        )
        const runId = response.headers.get("svc-run-id") ?? ""
        const body = yield* Effect.forkChild(Effect.tryPromise(() => response.text()))
        yield* gate.waiting

        yield* ServiceProcess.stop(a, "SIGTERM")
        assert.strictEqual(a.child.exitCode, 0)
        // The stream ended cleanly (a read error would fail here), where it was: no [DONE], so the client resumes.
        const cut = yield* Fiber.join(body)
        const cutFrames = frames(cut)
        assert.isAbove(cutFrames.length, 0)
        assert.notStrictEqual(cutFrames.at(-1)?.data, "[DONE]")
        const lastId = cutFrames.at(-1)?.id ?? 0
        // Left to be resumed: still active, not cancelled; A's node is gone at once (it stopped cleanly).
        const [row] = yield* query(db.url, `SELECT status FROM runs WHERE id = '${runId}'`)
        assert.notStrictEqual(row?.["status"], "cancelled")
        assert.deepStrictEqual(yield* query(db.url, "SELECT id FROM svc_nodes"), [])

        const b = yield* startNode(common)
        yield* gate.open
        const rest = yield* Effect.promise(async () => {
          const r = await fetch(`${b.url}/v1/runs/${runId}/stream`, {
            headers: { authorization: `Bearer ${key}`, "last-event-id": String(lastId) }
          })
          return r.text()
        })
        assert.strictEqual(frames(rest)[0]?.id, lastId + 1)
        assert.strictEqual(frames(rest).at(-1)?.data, "[DONE]")
        const parsed = yield* Effect.orDie(parseWithAi(cut + rest))
        assert.deepStrictEqual(parsed.ids, parsed.chunks.map((_, i) => i + 1))
        assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
        assert.strictEqual(parsed.message?.parts.filter((p) => p.type === "text").map((p) => p.text).at(-1), "resumed")
        const run = decode(Run, (yield* ServiceProcess.request(b.url, "GET", `/v1/runs/${runId}`, key)).text)
        assert.strictEqual(run.status, "completed")
        yield* ServiceProcess.stop(b)
        assert.strictEqual(b.child.exitCode, 0)
      }).pipe(Effect.scoped),
    180_000
  )
})

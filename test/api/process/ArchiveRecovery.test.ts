/**
 * Svc-Request-Id stability across a crash (spec 6.1): a step whose oversized
 * result the handler already archived is cut short by SIGKILL; when the
 * service comes back the step is executed again, the same call archives the
 * same logical artifact, and the kept answer is replayed: the handler is
 * called once, and both attempts' overflow chunks name the same artifact.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Agent } from "../../../domain/Agent.ts"
import { ResultHandler } from "../../../domain/ResultHandler.ts"
import { Run, RunReceipt } from "../../../domain/Run.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import { ToolServer } from "../../../domain/ToolServer.ts"
import { overflowsOf } from "../../support/Conversation.ts"
import { gateServer } from "../../support/GateMcpServer.ts"
import * as HookServer from "../../support/HookServer.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { freePort } from "../../support/TestServer.ts"
import { parseWithAi } from "../../support/UiStream.ts"

const decode = ServiceProcess.decodeJson
const key = "sk_archive_a"
const storyText = `${"once upon a time ".repeat(300)}the end`

/** Follows the run's stream until `marker` has been streamed (so it is stored), then lets go. */
const streamUntil = (url: string, runId: string, marker: string) =>
  Effect.tryPromise(async () => {
    const response = await fetch(`${url}/v1/runs/${runId}/stream`, { headers: { authorization: `Bearer ${key}` } })
    if (response.body === null) throw new Error("no stream")
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    let text = ""
    while (!text.includes(marker)) {
      const { done, value } = await reader.read()
      if (done) throw new Error(`the stream ended without ${marker}:\n${text}`)
      text += decoder.decode(value, { stream: true })
    }
    await reader.cancel()
  })

describe("archive recovery", () => {
  it.live(
    "postgres: a step re-executed after a crash replays the handler's kept answer; the handler is called once",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const handlerServer = yield* HookServer.HookServer
        yield* handlerServer.answerWith(
          HookServer.reply(200, { artifactId: "arch-crash", url: "https://files.example.com/arch-crash" })
        )
        const gate = yield* gateServer
        const env = {
          DATABASE_URL: db.url,
          SVC_API_KEYS: `${key}:org_archive:prod`,
          SVC_MASTER_KEY: Buffer.alloc(32, 5).toString("base64"),
          SVC_ALLOW_PRIVATE_URLS: "1",
          SVC_QUIET: "1",
          SVC_RUNNER_PORT: String(yield* freePort)
        }
        const first = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
        const post = (path: string, body: unknown) =>
          Effect.map(ServiceProcess.request(first.url, "POST", path, key, body), (r) => r.text)
        const handler = decode(
          ResultHandler,
          yield* post("/v1/result-handlers", {
            kind: "artifact",
            name: "archive",
            url: `${handlerServer.origin}/archive`,
            secret: "whsec_archive_signing_secret"
          })
        )
        const server = decode(
          ToolServer,
          yield* post("/v1/tool-servers", { name: "gate", transport: "http", url: gate.url, resultCapBytes: 1_024 })
        )
        const agent = decode(
          Agent,
          yield* post("/v1/agents", {
            capabilities: { mcp: { toolServerIds: [server.id] } },
            artifacts: { oversizedToolResults: { resultHandlerId: handler.id } }
          })
        )
        const thread = decode(ThreadCreated, yield* post("/v1/threads", { agentId: agent.id }))
        // One step: the oversized echo (archived) and a call that blocks until the test opens the gate.
        const calls = [{ name: "mcp__gate__echo", input: { text: storyText } }, { name: "mcp__gate__wait", input: {} }]
        const receipt = decode(
          RunReceipt,
          yield* Effect.promise(async () => {
            const r = await fetch(`${first.url}/v1/threads/${thread.id}/messages`, {
              method: "POST",
              headers: {
                authorization: `Bearer ${key}`,
                "content-type": "application/json",
                accept: "application/json"
              },
              body: JSON.stringify({ input: `/tools ${JSON.stringify(calls)}\n/text done` })
            })
            return r.text()
          })
        )
        yield* gate.waiting
        // The archive's answer is kept before its overflow chunk is announced: once streamed, it is stored.
        yield* streamUntil(first.url, receipt.runId, "data-svc-tool-result-overflow")
        assert.strictEqual((yield* handlerServer.received).length, 1)
        yield* ServiceProcess.stop(first, "SIGKILL")

        const second = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
        yield* gate.open
        const streamed = yield* ServiceProcess.request(second.url, "GET", `/v1/runs/${receipt.runId}/stream`, key)
        const parsed = yield* Effect.orDie(parseWithAi(streamed.text))
        const run = decode(
          Run,
          (yield* ServiceProcess.request(second.url, "GET", `/v1/runs/${receipt.runId}`, key)).text
        )
        yield* ServiceProcess.stop(second)

        assert.strictEqual(run.status, "completed")
        assert.isTrue(parsed.chunks.some((c) => c.type === "reset-step"), "the interrupted step was executed again")
        const overflows = overflowsOf(parsed.chunks)
        assert.strictEqual(overflows.length, 2, "one overflow per execution of the step")
        assert.deepStrictEqual(overflows[1], overflows[0])
        assert.deepStrictEqual(overflows[0], {
          toolCallId: (overflows[0] as { toolCallId: string }).toolCallId,
          toolName: "mcp__gate__echo",
          bytes: Buffer.byteLength(storyText),
          capBytes: 1_024,
          recovery: "remote-handler",
          resultHandlerId: handler.id,
          artifactId: "arch-crash",
          url: "https://files.example.com/arch-crash"
        })
        // The handler was called once, for both executions of the step.
        assert.strictEqual((yield* handlerServer.received).length, 1)
      }).pipe(Effect.provide(HookServer.HookServer.layer), Effect.scoped),
    120_000
  )
})

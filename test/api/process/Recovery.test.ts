/**
 * Durability: a run whose process is killed (SIGKILL) mid-run resumes when
 * the service comes back, from its last checkpoint, without repeating a
 * completed step, and its stream stays one coherent stream for the ai
 * package. Embedded and PostgreSQL storage.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Run, RunReceipt } from "../../../domain/Run.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import { callIdsOf } from "../../support/Conversation.ts"
import { gateServer } from "../../support/GateMcpServer.ts"
import { gatedAgent } from "../../support/ProcessNodes.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { freePort } from "../../support/TestServer.ts"
import { parseWithAi } from "../../support/UiStream.ts"

const decode = ServiceProcess.decodeJson

const tempDataDir = ServiceProcess.tempDataDir("svc-recovery-")

const key = "sk_recovery_a"

/** Starts the service, runs a two-tool turn that blocks in its second tool, kills the process, restarts it, lets the run finish. */
const killMidRun = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const first = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
    const post = (url: string, path: string, body: unknown) => ServiceProcess.request(url, "POST", path, key, body)
    const agent = yield* gatedAgent(first.url, key, gate.url)
    const thread = decode(ThreadCreated, (yield* post(first.url, "/v1/threads", { agentId: agent.id })).text)
    const receipt = yield* Effect.promise(async () => {
      const r = await fetch(`${first.url}/v1/threads/${thread.id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({
          input: "/tool mcp__gate__echo {\"text\":\"one\"}\n/tool mcp__gate__wait {}\n/text finished"
        })
      })
      return decode(RunReceipt, await r.text())
    })
    yield* gate.waiting
    const echoCallsBefore = gate.headers().length
    yield* ServiceProcess.stop(first, "SIGKILL")

    const second = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
    yield* gate.open
    const streamed = yield* ServiceProcess.request(second.url, "GET", `/v1/runs/${receipt.runId}/stream`, key)
    const parsed = yield* Effect.orDie(parseWithAi(streamed.text))
    const run = decode(Run, (yield* ServiceProcess.request(second.url, "GET", `/v1/runs/${receipt.runId}`, key)).text)
    yield* ServiceProcess.stop(second)
    return { parsed, run, echoCallsBefore, gate }
  })

const assertResumed = (result: Effect.Success<ReturnType<typeof killMidRun>>) => {
  const { parsed, run } = result
  assert.strictEqual(run.status, "completed")
  assert.strictEqual(run.terminalReason, null)
  assert.strictEqual(run.usage?.steps, 3)
  // The completed first step (echo) was not repeated: one echo result in the stream.
  const outputs = parsed.chunks.filter((c) => c.type === "tool-output-available")
  // The replayed step's call has an id of its own; each result is under the tc_ id of the call it answers.
  const started = callIdsOf(parsed.chunks)
  assert.deepStrictEqual(outputs.map((c) => ("toolCallId" in c ? c.toolCallId : "")), [started[0], started.at(-1)])
  // The interrupted step was replayed from its start, announced with reset-step.
  assert.isTrue(parsed.chunks.some((c) => c.type === "reset-step"))
  assert.deepStrictEqual(parsed.ids, parsed.chunks.map((_, i) => i + 1))
  assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
}

describe("recovery", () => {
  it.live(
    "embedded: a run killed mid-run resumes after restart from its last checkpoint",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDataDir
        const result = yield* killMidRun({
          SVC_DATA_DIR: dataDir,
          SVC_API_KEYS: `${key}:org_rec:prod`,
          SVC_ALLOW_PRIVATE_URLS: "1",
          SVC_QUIET: "1"
        })
        assertResumed(result)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "postgres: a run killed mid-run resumes after restart from its last checkpoint",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const result = yield* killMidRun({
          DATABASE_URL: db.url,
          SVC_API_KEYS: `${key}:org_rec:prod`,
          SVC_MASTER_KEY: Buffer.alloc(32, 3).toString("base64"),
          SVC_ALLOW_PRIVATE_URLS: "1",
          SVC_QUIET: "1",
          SVC_RUNNER_PORT: String(yield* freePort)
        })
        assertResumed(result)
      }).pipe(Effect.scoped),
    120_000
  )
})

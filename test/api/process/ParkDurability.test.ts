/**
 * Parking is durable (spec 3.1): a parked run holds no fiber, so the process
 * can go away; after a restart the answer resumes the run where it left off,
 * and a max-park deadline that passed while the service was down fires when
 * it comes back. Embedded storage (PGlite) and PostgreSQL.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Agent } from "../../../domain/Agent.ts"
import { Interaction } from "../../../domain/Interaction.ts"
import { Page } from "../../../domain/Page.ts"
import { Run } from "../../../domain/Run.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { freePort } from "../../support/TestServer.ts"
import { frames, parseWithAi } from "../../support/UiStream.ts"

const Chunk = Schema.Struct({
  type: Schema.String,
  reason: Schema.optionalKey(Schema.String),
  data: Schema.optionalKey(Schema.Unknown)
})

const decode = ServiceProcess.decodeJson
const key = "sk_park_durability"
const ask = `/tool ask_question ${
  JSON.stringify({ title: "Go on?", questions: [{ id: "go", prompt: "Go on?" }] })
}\n/text resumed after restart`

const tempDataDir = ServiceProcess.tempDataDir("svc-park-")

/** Starts a service, parks a run on a question, and stops the service (SIGKILL). */
const parkThenKill = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const first = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
    const post = (path: string, body: unknown) => ServiceProcess.request(first.url, "POST", path, key, body)
    const agent = decode(Agent, (yield* post("/v1/agents", { capabilities: { userInteraction: true } })).text)
    const thread = decode(ThreadCreated, (yield* post("/v1/threads", { agentId: agent.id })).text)
    const parked = yield* Effect.promise(async () => {
      const r = await fetch(`${first.url}/v1/threads/${thread.id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ input: ask })
      })
      return { runId: r.headers.get("svc-run-id") ?? "", text: await r.text() }
    })
    const list = decode(
      Page(Interaction),
      (yield* ServiceProcess.request(first.url, "GET", `/v1/interactions?runId=${parked.runId}`, key)).text
    )
    yield* ServiceProcess.stop(first, "SIGKILL")
    const lastEventId = frames(parked.text).flatMap((f) => (f.id === undefined ? [] : [f.id])).at(-1) ?? 0
    return { runId: parked.runId, interaction: list.data[0], threadId: thread.id, lastEventId }
  })

const resumesAfterRestart = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const { runId, interaction } = yield* parkThenKill(env)
    const second = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
    const parked = decode(Run, (yield* ServiceProcess.request(second.url, "GET", `/v1/runs/${runId}`, key)).text)
    assert.strictEqual(parked.status, "waiting_for_input")
    const resolved = yield* ServiceProcess.request(
      second.url,
      "POST",
      `/v1/interactions/${interaction.id}/resolve`,
      key,
      {
        inputResponses: [{ requestId: "go", text: "yes" }]
      }
    )
    assert.strictEqual(resolved.status, 200)
    const stream = yield* ServiceProcess.request(second.url, "GET", `/v1/runs/${runId}/stream`, key)
    const parsed = yield* Effect.orDie(parseWithAi(stream.text))
    assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
    assert.strictEqual(
      parsed.message?.parts.flatMap((p) => ("text" in p && p.type === "text" ? [p.text] : [])).join(""),
      "resumed after restart"
    )
    const done = decode(Run, (yield* ServiceProcess.request(second.url, "GET", `/v1/runs/${runId}`, key)).text)
    assert.strictEqual(done.status, "completed")
    yield* ServiceProcess.stop(second)
  })

/**
 * The window is 1 ms and the recovery pass runs only at start (interval one hour): the first process's pass ran
 * before the run parked, so only the restarted process can expire it.
 */
const expiresAfterRestart = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const timed = { ...env, SVC_MAX_PARK_MS: "1", SVC_RECOVERY_INTERVAL_MS: "3600000" }
    const { runId, interaction, threadId, lastEventId } = yield* parkThenKill(timed)
    const second = yield* ServiceProcess.start({ ...timed, PORT: String(yield* freePort) })
    // Following from after the park's last frame waits for what comes next: the expiry.
    const rest = yield* Effect.promise(async () => {
      const r = await fetch(`${second.url}/v1/runs/${runId}/stream`, {
        headers: { authorization: `Bearer ${key}`, "last-event-id": String(lastEventId) }
      })
      return r.text()
    })
    const chunks = frames(rest).filter((f) => f.data !== "[DONE]").map((f) => decode(Chunk, f.data))
    assert.deepStrictEqual(chunks.map((c) => c.type), ["data-svc-terminal", "data-svc-usage", "abort"])
    assert.deepStrictEqual(chunks.at(-1), { type: "abort", reason: "interaction_timeout" })
    const run = decode(Run, (yield* ServiceProcess.request(second.url, "GET", `/v1/runs/${runId}`, key)).text)
    assert.strictEqual(run.status, "cancelled")
    assert.strictEqual(run.terminalReason, "interaction_timeout")
    const after = decode(
      Interaction,
      (yield* ServiceProcess.request(second.url, "GET", `/v1/interactions/${interaction.id}`, key)).text
    )
    assert.strictEqual(after.status, "cancelled")
    const thread = yield* ServiceProcess.request(second.url, "GET", `/v1/threads/${threadId}`, key)
    assert.match(thread.text, /"status":"idle"/)
    yield* ServiceProcess.stop(second)
  })

describe("park durability", () => {
  it.live("embedded: resolving after a restart resumes the parked run", () =>
    Effect.gen(function*() {
      const dir = yield* tempDataDir
      yield* resumesAfterRestart({ SVC_DATA_DIR: dir, SVC_API_KEYS: `${key}:org_park:prod`, SVC_QUIET: "1" })
    }).pipe(Effect.scoped), 120_000)

  it.live(
    "postgres: resolving after a restart resumes the parked run; a deadline passed while down fires at start",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const env = {
          DATABASE_URL: db.url,
          SVC_API_KEYS: `${key}:org_park:prod`,
          SVC_MASTER_KEY: Buffer.alloc(32, 4).toString("base64"),
          SVC_QUIET: "1",
          SVC_RUNNER_PORT: String(yield* freePort)
        }
        yield* resumesAfterRestart(env)
        yield* expiresAfterRestart(env)
      }).pipe(Effect.scoped),
    120_000
  )
})

/**
 * SVC_PROCESSES: `node src/main.ts` supervises several service processes on
 * one PostgreSQL, behind one port. Both workers serve requests and host runs;
 * a worker killed mid-load is started again and no turn is lost; SIGTERM
 * stops every worker cleanly. Without DATABASE_URL it is refused at start.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Run } from "../../../domain/Run.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import { introduction } from "../../../src/model/ScriptedModel.ts"
import { gateServer } from "../../support/GateMcpServer.ts"
import { gatedAgent } from "../../support/ProcessNodes.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { query, testDatabase } from "../../support/TestDatabase.ts"
import { consecutiveFreePorts, freePort } from "../../support/TestServer.ts"
import { frames, parseWithAi } from "../../support/UiStream.ts"

const decode = ServiceProcess.decodeJson
const key = "sk_processes"
const turns = 6
/** What starting, failing over or restarting may take, at most. */
const deadlineMs = 60_000

/** Workers (by index) that printed their HTTP "Listening on" line; a restarted worker prints it again. */
const listening = (output: string) =>
  [...output.matchAll(/Listening on http:\/\/\S+ \{ worker: '(\d+)' \}/g)].map((m) => m[1])

/** Workers (by index) whose access log shows a POST of a message. */
const servedMessages = (output: string) =>
  new Set(
    [...output.matchAll(/POST \/v1\/threads\/\S+\/messages \d{3} [\d.]+ ms \S+ \{ worker: '(\d+)' \}/g)]
      .map((m) => m[1])
  )

const pidsOf = (output: string, worker: number) =>
  [...output.matchAll(new RegExp(`worker ${worker} started \\(pid (\\d+)`, "g"))].map((m) => Number(m[1]))

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A streamed message: the response once its headers arrived (run id known), the body read later. */
const postMessage = (url: string, threadId: string, input: string) =>
  Effect.promise(() =>
    fetch(`${url}/v1/threads/${threadId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ input })
    })
  )

/** The body, or undefined when the connection broke (its worker was killed) before the stream's end. */
const bodyOf = (response: Response) =>
  Effect.tryPromise(() => response.text()).pipe(
    Effect.map((text) => (frames(text).at(-1)?.data === "[DONE]" ? text : undefined)),
    Effect.orElseSucceed(() => undefined)
  )

describe("several processes on one host", () => {
  it.live("SVC_PROCESSES > 1 without DATABASE_URL is refused at start with one line", () =>
    Effect.gen(function*() {
      const dataDir = yield* ServiceProcess.tempDataDir("svc-processes-")
      const result = yield* ServiceProcess.run("src/main.ts", [], {
        SVC_PROCESSES: "2",
        SVC_DATA_DIR: dataDir,
        PORT: String(yield* freePort),
        SVC_QUIET: "1"
      })
      assert.strictEqual(result.code, 1)
      assert.strictEqual(
        result.stderr,
        "agent-service: SVC_PROCESSES > 1 needs DATABASE_URL: the embedded database is one process\n"
      )
      assert.strictEqual(result.stdout, "")
    }).pipe(Effect.scoped), 30_000)

  it.live(
    "SVC_PROCESSES=2: one port, two runners; turns complete on both; a worker killed mid-load is restarted and loses no turn; SIGTERM stops all",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const gate = yield* gateServer
        const runnerPort = yield* consecutiveFreePorts(2)
        const service = yield* ServiceProcess.start({
          DATABASE_URL: db.url,
          SVC_PROCESSES: "2",
          PORT: String(yield* freePort),
          SVC_RUNNER_HOST: "127.0.0.1",
          SVC_RUNNER_PORT: String(runnerPort),
          SVC_API_KEYS: `${key}:org_procs:prod`,
          SVC_MASTER_KEY: Buffer.alloc(32, 9).toString("base64"),
          SVC_ALLOW_PRIVATE_URLS: "1"
        })
        // Both workers started at once on a fresh database (migrations included) and serve the one port.
        yield* ServiceProcess.waitForOutput(service, (out) => new Set(listening(out)).size === 2, deadlineMs)
        const runners = yield* query(db.url, "SELECT address FROM cluster_runners ORDER BY address")
        assert.deepStrictEqual(runners.map((r) => r["address"]), [
          `127.0.0.1:${runnerPort}`,
          `127.0.0.1:${runnerPort + 1}`
        ])

        const post = (path: string, body: unknown) => ServiceProcess.request(service.url, "POST", path, key, body)
        const agent = yield* gatedAgent(service.url, key, gate.url)
        const threads = yield* Effect.forEach(
          Array.from({ length: turns }, (_, i) => i),
          () => Effect.map(post("/v1/threads", { agentId: agent.id }), (r) => decode(ThreadCreated, r.text).id)
        )

        // Concurrent turns open one connection each; the primary hands them to the workers in turn.
        const first = yield* Effect.forEach(threads, (threadId, i) =>
          Effect.gen(function*() {
            const response = yield* postMessage(service.url, threadId, `hello ${i}`)
            return yield* Effect.orDie(parseWithAi(yield* Effect.promise(() => response.text())))
          }), { concurrency: "unbounded" })
        first.forEach((parsed, i) => {
          assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
          assert.deepStrictEqual(parsed.message?.parts.filter((p) => p.type === "text").map((p) => p.text), [
            `${introduction}\n\nEcho: hello ${i}`
          ])
        })
        yield* ServiceProcess.waitForOutput(service, (out) => servedMessages(out).size === 2, deadlineMs)

        // Mid-load: every turn has its run (headers received), and runs block in a tool until the gate opens, after worker 1 died.
        const second = yield* Effect.forEach(
          threads,
          (threadId, i) => postMessage(service.url, threadId, `/tool mcp__gate__wait {}\n/text done ${i}`),
          { concurrency: "unbounded" }
        )
        const runIds = second.map((r) => r.headers.get("svc-run-id") ?? "")
        yield* gate.waiting
        const [killed] = pidsOf(service.output(), 1)
        process.kill(killed, "SIGKILL")
        yield* ServiceProcess.waitForOutput(
          service,
          (out) => pidsOf(out, 1).length === 2 && listening(out).filter((w) => w === "1").length === 2,
          deadlineMs
        )
        yield* gate.open

        // A stream cut with its worker is read again through the same port; every run completes its turn.
        let cut = 0
        for (const [i, response] of second.entries()) {
          const body = yield* bodyOf(response)
          if (body === undefined) cut++
          const text = body ??
            (yield* ServiceProcess.request(service.url, "GET", `/v1/runs/${runIds[i]}/stream`, key)).text
          const parsed = yield* Effect.orDie(parseWithAi(text))
          assert.deepStrictEqual(parsed.chunks.at(-1), { type: "finish", finishReason: "stop" })
          const run = decode(
            Run,
            (yield* ServiceProcess.request(service.url, "GET", `/v1/runs/${runIds[i]}`, key)).text
          )
          assert.strictEqual(run.status, "completed")
          assert.deepStrictEqual(
            parsed.message?.parts.filter((p) => p.type === "text").map((p) => p.text).at(-1),
            `done ${i}`
          )
        }

        // The connections worker 1 held (about half) were cut mid-turn.
        assert.isAbove(cut, 0)

        // SIGTERM: the supervisor stops its workers (each unregisters its runner) and exits once they have.
        const workers = [...pidsOf(service.output(), 0), ...pidsOf(service.output(), 1).slice(1)]
        yield* ServiceProcess.stop(service)
        assert.strictEqual(service.child.exitCode, 0)
        assert.deepStrictEqual(workers.filter(isRunning), [])
        assert.deepStrictEqual(yield* query(db.url, "SELECT address FROM cluster_runners"), [])
      }).pipe(Effect.scoped),
    180_000
  )
})

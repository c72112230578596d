/**
 * Subagents across processes: a worker whose process is killed (SIGKILL)
 * mid-step resumes after restart from its last checkpoint without repeating
 * a completed step, and its root, which waited durably (no fiber), completes
 * with the worker's answer; with two runner processes on one PostgreSQL, the
 * workers of one root are placed by the cluster's sharding on both, except
 * when they work in the thread's managed workspace: then every one runs on
 * its root's node (each node has a workspace root of its own), and all their
 * files land in the one workspace. The two-runner tests share one deployment
 * (a database, two nodes, each with its workspace root): starting one and
 * waiting for its shards to settle is most of such a test's time.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Schedule } from "effect"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Agent } from "../../../domain/Agent.ts"
import { Run, RunReceipt } from "../../../domain/Run.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import { gateServer } from "../../support/GateMcpServer.ts"
import { deploymentEnv, gatedAgent, startNode } from "../../support/ProcessNodes.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { delegate, tasksOf } from "../../support/Subagents.ts"
import { query, testDatabase } from "../../support/TestDatabase.ts"
import { freePort } from "../../support/TestServer.ts"
import { parseWithAi } from "../../support/UiStream.ts"

const decode = ServiceProcess.decodeJson
const key = "sk_subagents"

/** A gate MCP server, a tool server on it, an agent with subagents using it, and a thread. */
const setup = (url: string) =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const agent = yield* gatedAgent(url, key, gate.url, { subagents: true })
    const thread = decode(
      ThreadCreated,
      (yield* ServiceProcess.request(url, "POST", "/v1/threads", key, { agentId: agent.id })).text
    )
    return { gate, thread }
  })

/** Starts a run with `input` (Accept: application/json): its receipt. */
const startRun = (url: string, threadId: string, input: string) =>
  Effect.promise(async () => {
    const r = await fetch(`${url}/v1/threads/${threadId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ input })
    })
    return decode(RunReceipt, await r.text())
  })

const taskRefs = (chunks: ReadonlyArray<{ readonly type: string }>) => tasksOf(chunks).map((t) => t.workerRef)

/** A node's own workspace root (traversable by the workspaces' uids), removed with the scope. */
const workspaceRoot = Effect.acquireRelease(
  Effect.sync(() => {
    const root = mkdtempSync(join(tmpdir(), "svc-tree-ws-"))
    chmodSync(root, 0o711)
    return root
  }),
  (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
)

/** Two runner nodes of one deployment on a fresh database, once both hold shard locks; each with its `own` env. */
const twoRunners = (own: { readonly a: Record<string, string>; readonly b: Record<string, string> }) =>
  Effect.gen(function*() {
    const db = yield* testDatabase
    const common = { ...deploymentEnv(db.url, `${key}:org_sub:prod`, 6), SVC_ALLOW_PRIVATE_URLS: "1" }
    const a = yield* startNode({ ...common, ...own.a })
    const b = yield* startNode({ ...common, ...own.b })
    // The cluster announces no end of its rebalancing: wait (bounded) until both runners hold shard locks.
    const lockHolders = query(
      db.url,
      `SELECT count(DISTINCT l.pid)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
        WHERE d.datname = '${db.name}' AND l.locktype = 'advisory' AND l.granted AND l.objsubid = 2`
    )
    yield* lockHolders.pipe(
      Effect.filterOrFail((rows) => rows[0]?.["n"] === 2),
      Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 100 })
    )
    return { db, a, b }
  })

/** Two runner nodes of one deployment, each with a workspace root of its own, stopped (SIGTERM) at the end. */
class TwoRunners extends Context.Service<TwoRunners, Effect.Success<ReturnType<typeof twoRunners>>>()(
  "test/SubagentsTwoRunners"
) {}

const TwoRunnersLive = Layer.effect(TwoRunners)(
  Effect.gen(function*() {
    const runners = yield* twoRunners({
      a: { SVC_WORKSPACE_ROOT: yield* workspaceRoot },
      b: { SVC_WORKSPACE_ROOT: yield* workspaceRoot }
    })
    yield* Effect.addFinalizer(() => Effect.andThen(ServiceProcess.stop(runners.a), ServiceProcess.stop(runners.b)))
    return runners
  })
)

describe("subagents across processes", () => {
  it.live(
    "embedded: a worker killed mid-step resumes after restart without repeating a completed step; its root completes",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* ServiceProcess.tempDataDir("svc-subagents-")
        const env = {
          SVC_DATA_DIR: dataDir,
          SVC_API_KEYS: `${key}:org_sub:prod`,
          SVC_ALLOW_PRIVATE_URLS: "1",
          SVC_QUIET: "1"
        }
        const first = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
        const { gate, thread } = yield* setup(first.url)
        const prompt = ["/tool mcp__gate__echo {\"text\":\"one\"}", "/tool mcp__gate__wait {}", "/text finished"].join(
          "\n"
        )
        const receipt = yield* startRun(
          first.url,
          thread.id,
          [delegate({ label: "durable", prompt }), "/text root done"].join("\n")
        )
        // The worker completed its first step (echo) and is blocked in its second.
        yield* gate.waiting
        yield* ServiceProcess.stop(first, "SIGKILL")

        const second = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
        yield* gate.open
        const root = yield* Effect.orDie(
          parseWithAi((yield* ServiceProcess.request(second.url, "GET", `/v1/runs/${receipt.runId}/stream`, key)).text)
        )
        assert.deepStrictEqual(root.chunks.at(-1), { type: "finish", finishReason: "stop" })
        assert.deepStrictEqual(root.ids, root.chunks.map((_, i) => i + 1))
        const [workerRef] = taskRefs(root.chunks)
        assert.deepStrictEqual(
          root.chunks.filter((c) => c.type === "tool-output-available").map((
            c
          ) => ("output" in c ? c.output : undefined)),
          [
            { workerRef, answer: "finished" }
          ]
        )
        const run = decode(
          Run,
          (yield* ServiceProcess.request(second.url, "GET", `/v1/runs/${receipt.runId}`, key)).text
        )
        assert.deepStrictEqual([run.status, run.usage?.subagentRuns?.map((r) => [r.status, r.steps])], ["completed", [[
          "completed",
          3
        ]]])

        // The worker's sub-stream: its completed first step once, the interrupted step replayed after reset-step.
        const sub = yield* Effect.orDie(parseWithAi(
          (yield* ServiceProcess.request(
            second.url,
            "GET",
            `/v1/runs/${receipt.runId}/workers/${workerRef}/stream`,
            key
          )).text
        ))
        const outputs = sub.chunks.flatMap((c) => (c.type === "tool-output-available" ? [c.output] : []))
        assert.deepStrictEqual(outputs, [[{ type: "text", text: "one" }], [{ type: "text", text: "gate opened" }]])
        assert.strictEqual(sub.chunks.filter((c) => c.type === "reset-step").length, 1)
        assert.deepStrictEqual(sub.ids, sub.chunks.map((_, i) => i + 1))
        assert.deepStrictEqual(sub.chunks.at(-1), { type: "finish", finishReason: "stop" })
        yield* ServiceProcess.stop(second)
      }).pipe(Effect.scoped),
    120_000
  )
})

layer(TwoRunnersLive, { timeout: 120_000, excludeTestServices: true })("subagents on two runner processes", (it) => {
  it.effect("two runner processes: the workers of one root are placed on both", () =>
    Effect.gen(function*() {
      const { db, a, b } = yield* TwoRunners
      const { thread } = yield* setup(a.url)
      const tasks = Array.from(
        { length: 12 },
        (_, i) => ({ label: `t${i}`, prompt: `/tool mcp__gate__echo {"text":"${i}"}` })
      )
      const receipt = yield* startRun(a.url, thread.id, delegate(...tasks))
      const root = yield* Effect.orDie(
        parseWithAi((yield* ServiceProcess.request(b.url, "GET", `/v1/runs/${receipt.runId}/stream`, key)).text)
      )
      assert.deepStrictEqual(root.chunks.at(-1), { type: "finish", finishReason: "stop" })
      assert.strictEqual(taskRefs(root.chunks).length, 12)
      // Each worker run records the process that executed it.
      const executors = yield* query(
        db.url,
        `SELECT DISTINCT executor FROM runs WHERE root_run_id = '${receipt.runId}'`
      )
      assert.strictEqual(executors.length, 2)
      const nodes = yield* query(db.url, "SELECT id FROM svc_nodes")
      assert.includeMembers(nodes.map((n) => n["id"]), executors.map((e) => e["executor"]))
    }).pipe(Effect.scoped), 120_000)

  it.effect(
    "two runner processes, a managed workspace: every worker runs on its root's node, and all their files land in the one workspace",
    () =>
      Effect.gen(function*() {
        const { db, a, b } = yield* TwoRunners
        const agent = decode(
          Agent,
          (yield* ServiceProcess.request(a.url, "POST", "/v1/agents", key, {
            capabilities: { subagents: true },
            workspace: { type: "managed", shell: true, network: { mode: "offline" } }
          })).text
        )
        const thread = decode(
          ThreadCreated,
          (yield* ServiceProcess.request(a.url, "POST", "/v1/threads", key, { agentId: agent.id })).text
        )
        const bash = (command: string) => `/tool bash ${JSON.stringify({ command })}`
        const tasks = Array.from({ length: 8 }, (_, i) => ({
          label: `t${i}`,
          prompt: bash(`mkdir -p out && echo ${i} > out/${i}.txt`)
        }))
        const receipt = yield* startRun(
          a.url,
          thread.id,
          [delegate(...tasks), bash("cat out/*.txt | sort -n | tr '\\n' ' '")].join("\n")
        )
        const root = yield* Effect.orDie(
          parseWithAi((yield* ServiceProcess.request(b.url, "GET", `/v1/runs/${receipt.runId}/stream`, key)).text)
        )
        assert.deepStrictEqual(root.chunks.at(-1), { type: "finish", finishReason: "stop" })
        assert.strictEqual(taskRefs(root.chunks).length, 8)
        const outputs = root.chunks.flatMap((c) => (c.type === "tool-output-available" ? [c.output] : []))
        assert.deepStrictEqual(outputs.at(-1), { exitCode: 0, stdout: "0 1 2 3 4 5 6 7 ", stderr: "" })
        // The root and each of its workers record the process that executed them: one.
        const executors = yield* query(
          db.url,
          `SELECT DISTINCT executor FROM runs WHERE id = '${receipt.runId}' OR root_run_id = '${receipt.runId}'`
        )
        assert.strictEqual(executors.length, 1)
      }).pipe(Effect.scoped),
    120_000
  )
})

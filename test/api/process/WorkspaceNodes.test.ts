/**
 * A managed workspace follows its thread across nodes: two service processes
 * on one PostgreSQL, each with a workspace root of its own (two disks). A run
 * on node A writes a file; A is killed (SIGKILL); the thread's next run,
 * served by node B, reads the file from the snapshot and changes it. Then the
 * stored snapshot is corrupted, B is killed, and A comes back with its older
 * copy: the next run must restore, cannot, and ends snapshot_unavailable.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Agent } from "../../../domain/Agent.ts"
import { Run } from "../../../domain/Run.ts"
import { Thread, ThreadCreated } from "../../../domain/Thread.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { query, testDatabase } from "../../support/TestDatabase.ts"
import { freePort } from "../../support/TestServer.ts"
import { parseWithAi } from "../../support/UiStream.ts"

const decode = ServiceProcess.decodeJson
const key = "sk_workspace_nodes"

/** A node's own workspace root (traversable by the workspaces' uids), removed with the scope. */
const workspaceRoot = Effect.acquireRelease(
  Effect.sync(() => {
    const root = mkdtempSync(join(tmpdir(), "svc-node-ws-"))
    chmodSync(root, 0o711)
    return root
  }),
  (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
)

const bash = (command: string) => `/tool bash ${JSON.stringify({ command })}`

describe("a workspace across nodes", () => {
  it.live(
    "follows its thread to another node after a kill -9; a corrupted snapshot ends the next run snapshot_unavailable",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const rootA = yield* workspaceRoot
        const rootB = yield* workspaceRoot
        const common = {
          DATABASE_URL: db.url,
          SVC_API_KEYS: `${key}:org_ws:prod`,
          SVC_MASTER_KEY: Buffer.alloc(32, 6).toString("base64"),
          SVC_QUIET: "1",
          SVC_RUNNER_HOST: "127.0.0.1"
        }
        const node = (root: string) =>
          Effect.gen(function*() {
            return yield* ServiceProcess.start({
              ...common,
              SVC_WORKSPACE_ROOT: root,
              PORT: String(yield* freePort),
              SVC_RUNNER_PORT: String(yield* freePort)
            })
          })
        const send = (url: string, threadId: string, input: string) =>
          Effect.gen(function*() {
            const reply = yield* Effect.promise(async () => {
              const r = await fetch(`${url}/v1/threads/${threadId}/messages`, {
                method: "POST",
                headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
                body: JSON.stringify({ input })
              })
              return { runId: r.headers.get("svc-run-id") ?? "", text: await r.text() }
            })
            const parsed = yield* Effect.orDie(parseWithAi(reply.text))
            const run = decode(Run, (yield* ServiceProcess.request(url, "GET", `/v1/runs/${reply.runId}`, key)).text)
            return {
              run,
              outputs: parsed.chunks.filter((c) => c.type === "tool-output-available").map((c) => c.output)
            }
          })
        const snapshot = () =>
          Effect.map(
            query(db.url, `SELECT version::int AS version FROM workspace_snapshots`),
            (rows) => rows.map((r) => r["version"])
          )

        const a = yield* node(rootA)
        const agent = decode(
          Agent,
          (yield* ServiceProcess.request(a.url, "POST", "/v1/agents", key, {
            workspace: { type: "managed", shell: true, network: { mode: "offline" } }
          }))
            .text
        )
        const thread = decode(
          ThreadCreated,
          (yield* ServiceProcess.request(a.url, "POST", "/v1/threads", key, { agentId: agent.id })).text
        )
        const first = yield* send(a.url, thread.id, bash("echo written on node A > shared.txt && echo ok"))
        assert.strictEqual(first.run.status, "completed")
        assert.deepStrictEqual(first.outputs, [{ exitCode: 0, stdout: "ok\n", stderr: "" }])
        assert.deepStrictEqual(yield* snapshot(), [1])
        yield* ServiceProcess.stop(a, "SIGKILL")

        // Node B has never seen this workspace: it restores it from the snapshot.
        const b = yield* node(rootB)
        const second = yield* send(b.url, thread.id, bash("cat shared.txt && echo and on node B >> shared.txt"))
        assert.strictEqual(second.run.status, "completed")
        assert.deepStrictEqual(second.outputs, [{ exitCode: 0, stdout: "written on node A\n", stderr: "" }])
        assert.deepStrictEqual(yield* snapshot(), [2])
        const onB = decode(Thread, (yield* ServiceProcess.request(b.url, "GET", `/v1/threads/${thread.id}`, key)).text)
        assert.strictEqual(onB.workspace?.status, "active")

        // The stored snapshot is damaged; node A comes back with its older copy (version 1) and must restore version 2.
        yield* query(db.url, `UPDATE workspace_snapshots SET data = decode('00ff00ff', 'hex')`)
        yield* ServiceProcess.stop(b, "SIGKILL")
        const again = yield* node(rootA)
        const third = yield* send(again.url, thread.id, bash("cat shared.txt"))
        assert.strictEqual(third.run.status, "failed")
        assert.strictEqual(third.run.terminalReason, "snapshot_unavailable")
        assert.strictEqual(third.run.error?.code, "snapshot_unavailable")
        assert.deepStrictEqual(third.outputs, [])
        const onA = decode(
          Thread,
          (yield* ServiceProcess.request(again.url, "GET", `/v1/threads/${thread.id}`, key)).text
        )
        assert.strictEqual(onA.workspace?.status, "unavailable")
        // The damaged snapshot was not replaced by an empty one.
        assert.deepStrictEqual(yield* snapshot(), [2])
        yield* ServiceProcess.stop(again)
      }).pipe(Effect.scoped),
    180_000
  )
})

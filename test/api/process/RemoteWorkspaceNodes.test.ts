/**
 * Remote workspaces across the cluster (issue 31): two service processes on
 * one PostgreSQL, a real runner connected to node A (a client node, which runs
 * no runs) and the run executing on node B: the run reads, edits and runs a
 * command in the runner's directory, its calls reaching the runner through
 * PostgreSQL.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Agent } from "../../../domain/Agent.ts"
import { EnvironmentWithToken } from "../../../domain/Environment.ts"
import { ThreadCreated } from "../../../domain/Thread.ts"
import { toolStep } from "../../support/Conversation.ts"
import { deploymentEnv, startNode } from "../../support/ProcessNodes.ts"
import * as RunnerProcess from "../../support/RunnerProcess.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"

const key = "sk_remote_nodes"

describe("remote workspaces across nodes", () => {
  it.live(
    "a runner connected to one node serves a run executing on the other",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const common = deploymentEnv(db.url, `${key}:org_remote:prod`, 6)
        const b = yield* startNode(common)
        const a = yield* startNode({ ...common, SVC_CLUSTER_ROLE: "client" })
        const post = (path: string, body: unknown) => ServiceProcess.request(a.url, "POST", path, key, body)
        const env = ServiceProcess.decodeJson(
          EnvironmentWithToken,
          (yield* post("/v1/environments", { name: "box" })).text
        )
        const root = mkdtempSync(join(tmpdir(), "svc-runner-nodes-"))
        writeFileSync(join(root, "notes.txt"), "hello\n")
        const runner = yield* RunnerProcess.start({ url: a.url, token: env.token, root })
        yield* runner.connected
        const agent = ServiceProcess.decodeJson(
          Agent,
          (yield* post("/v1/agents", { workspace: { type: "remote", environmentId: env.id, shell: true } })).text
        )
        const thread = ServiceProcess.decodeJson(
          ThreadCreated,
          (yield* post("/v1/threads", { agentId: agent.id })).text
        )
        const sent = yield* post(`/v1/threads/${thread.id}/messages`, {
          input: [
            toolStep("read_file", { path: "notes.txt" }),
            toolStep("edit_file", { path: "notes.txt", oldString: "hello", newString: "bye" }),
            toolStep("bash", { command: "cat notes.txt" }),
            "/text done"
          ].join("\n")
        })
        // The outputs as the stream shows them, in the order a managed workspace's tools give their fields.
        const outputs = sent.text.split("\n").filter((l) => l.includes("\"type\":\"tool-output-available\""))
        assert.deepStrictEqual(outputs.map((l) => l.slice(l.indexOf("\"output\":"))), [
          `"output":${
            JSON.stringify({
              path: "notes.txt",
              content: "hello\n",
              startLine: 1,
              endLine: 1,
              totalLines: 1,
              truncated: false
            })
          }}`,
          `"output":${JSON.stringify({ path: "notes.txt", replacements: 1 })}}`,
          `"output":${JSON.stringify({ exitCode: 0, stdout: "bye\n", stderr: "" })}}`
        ])
        assert.include(sent.text, JSON.stringify({ type: "finish", finishReason: "stop" }))
        assert.strictEqual(readFileSync(join(root, "notes.txt"), "utf8"), "bye\n")
        yield* ServiceProcess.stop(a)
        yield* ServiceProcess.stop(b)
      }).pipe(Effect.scoped),
    120_000
  )
})

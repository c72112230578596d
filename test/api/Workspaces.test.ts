/**
 * Managed workspaces through the whole service, on the real sandbox: an agent
 * writes a file and runs a command that reads it in one run (scripted model
 * and an OpenAI-compatible model on aimock); the thread's workspace status;
 * files kept between runs and deleted with the thread; workspace_env secrets
 * set for commands and masked in everything that leaves the sandbox; the
 * restricted network through the egress proxy; a sandbox that cannot start
 * ends the run with workspace_unavailable.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { type Aimock, aimock, redactedKey } from "../support/Aimock.ts"
import * as Collection from "../support/Collection.ts"
import {
  agentWithThread,
  callIdsOf,
  getRun,
  getThread,
  outputsOf,
  send,
  successesOf,
  textOf,
  toolStep
} from "../support/Conversation.ts"
import { DnsServer } from "../support/DnsServer.ts"
import { listen } from "../support/HttpPeer.ts"
import * as TestServer from "../support/TestServer.ts"

class Peers
  extends Context.Service<Peers, { readonly model: Aimock; readonly apiPort: number }>()("test/WorkspacePeers")
{}

/** A local API the restricted workspace may reach by name (api.test, through the test DNS server). */
const localApi = listen((req, res) => {
  res.writeHead(200, { "content-type": "text/plain" })
  res.end(`api says hello to ${req.url ?? ""}`)
})

const Harness = Layer.unwrap(
  Effect.gen(function*() {
    const dns = yield* DnsServer
    const apiPort = yield* localApi
    const model = yield* aimock((mock) => {
      mock.on({ userMessage: "make the report", hasToolResult: false }, {
        toolCalls: [{
          id: "call_w1",
          name: "write_file",
          arguments: JSON.stringify({ path: "report.txt", content: "total: 42\n" })
        }]
      })
      mock.onToolResult("call_w1", {
        toolCalls: [{
          id: "call_b1",
          name: "bash",
          arguments: JSON.stringify({ command: "wc -c < report.txt; cat report.txt" })
        }]
      })
      mock.onToolResult("call_b1", { content: "The report says total: 42." })
    })
    const server = TestServer.layer({
      dnsServers: [dns.address],
      bands: {
        lite: { route: "openai:gpt-test", strict: false },
        core: { route: "scripted", strict: true },
        frontier: { route: null, strict: false }
      },
      openai: { baseUrl: `${model.url}/v1`, apiKey: Option.some(redactedKey) }
    })
    return Layer.merge(server, Layer.succeed(Peers)({ model, apiPort }))
  })
).pipe(Layer.provideMerge(DnsServer.layer({ "api.test": "127.0.0.1", "other.test": "127.0.0.1" })))

const offline = { type: "managed", network: { mode: "offline" } }

layer(Harness, { timeout: TestServer.setupTimeout })("managed workspaces", (it) => {
  it.effect("one run writes a file and runs a command that reads it; the workspace is active and keeps its files", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ workspace: offline })
      assert.deepStrictEqual(thread.workspace, { status: "uninitialized" })
      const { runId, parsed } = yield* send(
        thread.id,
        [
          toolStep("write_file", { path: "notes/hello.txt", content: "hi from the model\n" }),
          toolStep("bash", { command: "cat notes/hello.txt && echo done" }),
          "/text finished"
        ].join("\n")
      )
      assert.deepStrictEqual(outputsOf(parsed.chunks), [
        { path: "notes/hello.txt", bytes: 18 },
        { exitCode: 0, stdout: "hi from the model\ndone\n", stderr: "" }
      ])
      assert.strictEqual(textOf(parsed.message), "finished")
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      const after = yield* getThread(thread.id)
      assert.strictEqual(after.workspace?.status, "active")
      assert.isString(after.workspace?.updatedAt)

      // The next run finds the file; a failing command is a result carrying its exit code (spec 6.2);
      // a command that cannot start is an expected failure, shown as tool-output-available.
      const next = yield* send(
        thread.id,
        [
          toolStep("read_file", { path: "notes/hello.txt" }),
          toolStep("bash", { command: "exit 3" }),
          toolStep("bash", { command: "true", cwd: "../.." })
        ].join("\n")
      )
      const [read, failing] = successesOf(next.parsed.chunks)
      assert.include(JSON.stringify(read), "hi from the model")
      assert.deepStrictEqual(failing, { exitCode: 3, stdout: "", stderr: "" })
      const [, , refusedId] = callIdsOf(next.parsed.chunks)
      assert.deepStrictEqual(next.parsed.chunks.filter((c) => c.type.startsWith("tool-output")).at(-1), {
        type: "tool-output-available",
        toolCallId: refusedId,
        output: {
          type: "tool-output-error",
          error: { code: "workspace_error", message: "cwd: '../..' is outside the workspace" }
        }
      })

      // Deleting the thread deletes its workspace's files.
      const dir = join(TestServer.testWorkspaceRoot, "workspaces", thread.id)
      assert.isTrue(existsSync(dir))
      yield* TestServer.expectOk(yield* TestServer.request("DELETE", `/v1/threads/${thread.id}`), 200, Schema.Unknown)
      assert.isFalse(existsSync(dir))
    }))

  it.effect("filesystem without shell offers the file tools (and workspace_export_artifact) only; approvals name them like any tool", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ workspace: { ...offline, shell: false } })
      const { parsed } = yield* send(thread.id, "/show-tools")
      const names = (JSON.parse(textOf(parsed.message)) as ReadonlyArray<{ readonly name: string }>).map((t) => t.name)
      assert.deepStrictEqual(names.filter((n) => !n.startsWith("load_")), [
        "read_file",
        "write_file",
        "edit_file",
        "glob",
        "grep",
        "workspace_export_artifact"
      ])
    }))

  it.effect("workspace_env secrets are set for commands and masked as *** in the stream, the model's input and the run", () =>
    Effect.gen(function*() {
      const value = "s3cr3t-workspace-token-value"
      const secret = yield* Collection.secrets.create({ name: Collection.uniqueName("ws-token"), value })
      const context = yield* Collection.secretContexts.create({
        name: Collection.uniqueName("ws-env"),
        projections: [{ type: "workspace_env", secretId: secret.id, env: "DEPLOY_TOKEN" }]
      })
      const { thread } = yield* agentWithThread({ workspace: { ...offline, secretContexts: [context.id] } })
      const { runId, parsed } = yield* send(
        thread.id,
        toolStep("bash", { command: "echo token=$DEPLOY_TOKEN; env | grep -c DEPLOY_TOKEN" })
      )
      assert.deepStrictEqual(outputsOf(parsed.chunks), [{ exitCode: 0, stdout: "token=***\n1\n", stderr: "" }])
      // The model reads the masked output (the scripted model answers with it).
      assert.include(textOf(parsed.message), "token=***")
      const replay = yield* TestServer.request("GET", `/v1/runs/${runId}/stream`)
      const run = yield* TestServer.request("GET", `/v1/runs/${runId}`)
      for (const text of [replay.text, run.text, JSON.stringify(parsed.chunks)]) assert.notInclude(text, value)
    }))

  it.effect("restricted network: allowDomains are reached through the egress proxy, other hosts get 403, nothing bypasses it", () =>
    Effect.gen(function*() {
      const { apiPort } = yield* Peers
      const { thread } = yield* agentWithThread({
        workspace: { type: "managed", network: { mode: "restricted", allowDomains: ["api.test"] } }
      })
      const command = [
        `curl -s http://api.test:${apiPort}/hi`,
        "echo",
        `curl -s -o /dev/null -w '%{http_code}' http://other.test:${apiPort}/`,
        "echo",
        `curl -s --noproxy '*' --max-time 5 http://127.0.0.1:${apiPort}/ || echo unreachable`
      ].join("; ")
      const { parsed } = yield* send(thread.id, toolStep("bash", { command }))
      assert.deepStrictEqual(outputsOf(parsed.chunks), [{
        exitCode: 0,
        stdout: "api says hello to /hi\n403\nunreachable\n",
        stderr: ""
      }])
    }))

  it.effect("an OpenAI-compatible model (aimock) writes a file and runs a command that reads it in one run", () =>
    Effect.gen(function*() {
      const { model } = yield* Peers
      const { thread } = yield* agentWithThread({ band: "lite", workspace: offline })
      const { runId, parsed } = yield* send(thread.id, "make the report")
      assert.deepStrictEqual(outputsOf(parsed.chunks), [
        { path: "report.txt", bytes: 10 },
        { exitCode: 0, stdout: "10\ntotal: 42\n", stderr: "" }
      ])
      assert.strictEqual(textOf(parsed.message), "The report says total: 42.")
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      // The provider was offered the workspace tools and read the command's output.
      const requests = (yield* model.journal).filter((e) => e.path.includes("chat/completions"))
      const last = JSON.stringify(requests.at(-1)?.body)
      assert.include(last, "total: 42")
      assert.include(JSON.stringify(requests[0]?.body), "\"bash\"")
    }))
})

layer(TestServer.layer({ workspaceRoot: "/dev/null/svc-workspaces" }), { timeout: TestServer.setupTimeout })(
  "a workspace that cannot start",
  (it) => {
    it.effect("ends the run failed with workspace_unavailable and marks the thread's workspace failed", () =>
      Effect.gen(function*() {
        const { thread } = yield* agentWithThread({ workspace: offline })
        const { runId, parsed } = yield* send(thread.id, toolStep("bash", { command: "true" }))
        const run = yield* getRun(runId)
        assert.strictEqual(run.status, "failed")
        assert.strictEqual(run.terminalReason, "workspace_unavailable")
        assert.strictEqual(run.error?.code, "workspace_unavailable")
        assert.deepStrictEqual(parsed.chunks.find((c) => c.type === "data-svc-terminal"), {
          type: "data-svc-terminal",
          data: { terminalReason: "workspace_unavailable" }
        })
        assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "failed")
        // The thread is free again: a run without the workspace's tools can follow once the agent drops it.
        assert.strictEqual((yield* getThread(thread.id)).status, "idle")
      }))
  }
)

/**
 * One workspace for a run tree (spec 1.2, 2.1.3; subagents) through the whole
 * service on the real sandbox and the scripted model: a worker's file is
 * read by the root and by a later worker; two workers running at once each
 * see the other's file while both run, and both files land; a worker's
 * command has the root's network policy (through the same egress proxy) and
 * `workspace_env` secrets (masked in what it returns).
 */
import { assert } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, bashStep, outputsOf, send, textOf, toolStep } from "../support/Conversation.ts"
import { DnsServer } from "../support/DnsServer.ts"
import { listen } from "../support/HttpPeer.ts"
import { delegate, tasksOf } from "../support/Subagents.ts"
import * as TestServer from "../support/TestServer.ts"

class Api extends Context.Service<Api, { readonly port: number }>()("test/SubagentWorkspaceApi") {}

/** A local API the restricted workspace may reach by name (api.test, through the test DNS server). */
const Harness = Layer.unwrap(
  Effect.gen(function*() {
    const dns = yield* DnsServer
    const port = yield* listen((req, res) => res.end(`api says hello to ${req.url ?? ""}`))
    return Layer.merge(TestServer.layer({ dnsServers: [dns.address] }), Layer.succeed(Api)({ port }))
  })
).pipe(Layer.provideMerge(DnsServer.layer({ "api.test": "127.0.0.1", "other.test": "127.0.0.1" })))

const offline = { type: "managed", shell: true, network: { mode: "offline" } }

/** A worker's delegate_task result. */
const result = (output: unknown) => output as { readonly workerRef: string; readonly answer: string }

/** Waits (inside the sandbox, at most 20 s) until `file` exists. */
const waitFor = (file: string) => `for i in $(seq 1000); do [ -f ${file} ] && break; sleep 0.02; done`

TestServer.suiteWith(Harness)("a run tree's workspace", (it) => {
  it.effect("a worker's file is read by the root, then by a second worker, in the same workspace", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { subagents: true }, workspace: offline })
      const write = toolStep("write_file", { path: "shared/plan.md", content: "1. measure\n2. cut\n" })
      const { parsed } = yield* send(
        thread.id,
        [
          delegate({ label: "writer", prompt: [write, "/text wrote the plan"].join("\n") }),
          toolStep("read_file", { path: "shared/plan.md" }),
          delegate({ label: "reader", prompt: bashStep("tail -n 1 shared/plan.md") }),
          "/text done"
        ].join("\n")
      )
      const [writer, reader] = tasksOf(parsed.chunks)
      const [wrote, read, readByWorker] = outputsOf(parsed.chunks)
      assert.deepStrictEqual(wrote, { workerRef: writer.workerRef, answer: "wrote the plan" })
      assert.deepStrictEqual((read as { readonly content: string }).content, "1. measure\n2. cut\n")
      assert.deepStrictEqual(result(readByWorker), {
        workerRef: reader.workerRef,
        answer: `Result: ${JSON.stringify({ exitCode: 0, stdout: "2. cut\n", stderr: "" })}`
      })
      assert.strictEqual(textOf(parsed.message), "done")
      // The thread's one workspace holds it.
      const file = join(TestServer.testWorkspaceRoot, "workspaces", thread.id, "shared", "plan.md")
      assert.strictEqual(readFileSync(file, "utf8"), "1. measure\n2. cut\n")
    }))

  it.effect("two workers running at once share the workspace: each reads the other's file while both run; both land", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { subagents: true }, workspace: offline })
      // Each writes its file, then waits for the other's: both finish only if they share one workspace at once.
      const worker = (own: string, other: string) => ({
        label: own,
        prompt: bashStep(`echo ${own} > ${own}.txt; ${waitFor(`${other}.txt`)}; cat ${other}.txt`)
      })
      const { parsed } = yield* send(
        thread.id,
        [delegate(worker("left", "right"), worker("right", "left")), bashStep("cat left.txt right.txt")].join("\n")
      )
      const [left, right, both] = outputsOf(parsed.chunks)
      const stdout = (text: string) => `Result: ${JSON.stringify({ exitCode: 0, stdout: text, stderr: "" })}`
      assert.deepStrictEqual(result(left).answer, stdout("right\n"))
      assert.deepStrictEqual(result(right).answer, stdout("left\n"))
      assert.deepStrictEqual(both, { exitCode: 0, stdout: "left\nright\n", stderr: "" })
    }))

  it.effect("a worker's command has the root's network policy and workspace_env secrets (masked)", () =>
    Effect.gen(function*() {
      const { port } = yield* Api
      const value = "s3cr3t-tree-token-value"
      const secret = yield* Collection.secrets.create({ name: Collection.uniqueName("tree-token"), value })
      const context = yield* Collection.secretContexts.create({
        name: Collection.uniqueName("tree-env"),
        projections: [{ type: "workspace_env", secretId: secret.id, env: "DEPLOY_TOKEN" }]
      })
      const { thread } = yield* agentWithThread({
        capabilities: { subagents: true },
        workspace: {
          type: "managed",
          shell: true,
          network: { mode: "restricted", allowDomains: ["api.test"] },
          secretContexts: [context.id]
        }
      })
      const command = [
        "echo token=$DEPLOY_TOKEN",
        `curl -s http://api.test:${port}/from-the-tree`,
        "echo",
        `curl -s -o /dev/null -w '%{http_code}' http://other.test:${port}/`
      ].join("; ")
      const { runId, parsed } = yield* send(
        thread.id,
        [delegate({ label: "online", prompt: bashStep(command) }), bashStep(command)].join("\n")
      )
      const expected = { exitCode: 0, stdout: "token=***\napi says hello to /from-the-tree\n403", stderr: "" }
      const [worker, root] = outputsOf(parsed.chunks)
      assert.deepStrictEqual(root, expected)
      assert.deepStrictEqual(result(worker).answer, `Result: ${JSON.stringify(expected)}`)
      const replay = yield* TestServer.request("GET", `/v1/runs/${runId}/stream`)
      const sub = yield* TestServer.request("GET", `/v1/runs/${runId}/workers/${result(worker).workerRef}/stream`)
      for (const text of [replay.text, sub.text]) assert.notInclude(text, value)
    }))
})

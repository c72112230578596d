/**
 * Approvals apply to a remote workspace's tools like to managed ones (issue
 * 31), with a real runner process and a real hook server: a `write_file` the
 * hook pauses parks the run and the runner receives nothing until a person
 * approves (then the file has the exact content); a denied call never reaches
 * the runner and the model reads the reason; `autoAllow: ["read_file"]` runs
 * without review. A worker of such an agent works in the same remote
 * workspace; an advisor has no tools, the remote ones included.
 */
import { assert } from "@effect/vitest"
import type { UIMessageChunk } from "ai"
import { Effect, Layer } from "effect"
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EnvironmentWithToken } from "../../domain/Environment.ts"
import * as Collection from "../support/Collection.ts"
import {
  agentWithThread,
  callIdsOf,
  getRun,
  outputsOf,
  send,
  streamOf,
  textOf,
  toolStep
} from "../support/Conversation.ts"
import { HookServer, reply } from "../support/HookServer.ts"
import { approveAll, pendingOf } from "../support/Interactions.ts"
import * as RunnerProcess from "../support/RunnerProcess.ts"
import { delegate, tasksOf } from "../support/Subagents.ts"
import * as TestServer from "../support/TestServer.ts"

const { expectOk, request, TestApi } = TestServer

/** Runner processes take seconds to start on a loaded machine (node loads the CLI). */
const runnerTimeout = 90_000

const deniedChunks = (chunks: ReadonlyArray<UIMessageChunk>): ReadonlyArray<unknown> =>
  chunks.filter((c) => c.type === "data-svc-tool-denied" || c.type === "tool-output-denied")

/** An environment, a runner of it serving a new directory, and a thread of an agent working there. */
const served = (agentExtra: Record<string, unknown>) =>
  Effect.gen(function*() {
    const env = yield* expectOk(
      yield* request("POST", "/v1/environments", { body: { name: "box" } }),
      200,
      EnvironmentWithToken
    )
    const root = mkdtempSync(join(tmpdir(), "svc-runner-"))
    const runner = yield* RunnerProcess.start({ url: (yield* TestApi).url, token: env.token, root })
    yield* runner.connected
    const { thread } = yield* agentWithThread({
      workspace: { type: "remote", environmentId: env.id, shell: false },
      ...agentExtra
    })
    return { root, thread }
  })

const Harness = Layer.mergeAll(TestServer.layer(), HookServer.layer)

TestServer.suiteWith(Harness)("remote workspace approvals", (it) => {
  it.effect(
    "a paused write_file parks the run and the runner gets nothing until approved; a denied one never runs; autoAllow skips review",
    () =>
      Effect.gen(function*() {
        const hooks = yield* HookServer
        const hook = yield* Collection.toolApprovalHooks.create({
          name: "reviewer",
          url: `${hooks.origin}/review`,
          secret: "whsec_remote_approvals"
        })
        const { root, thread } = yield* served({
          approvals: { toolExecution: { hookId: hook.id }, autoAllow: ["read_file"] }
        })
        yield* hooks.answerWith(reply(200, { decision: "pause", reason: "Needs a human." }))

        // Paused: the run waits for a person and the runner has received nothing.
        const first = yield* send(thread.id, toolStep("write_file", { path: "out.txt", content: "approved\n" }))
        assert.deepStrictEqual(first.parsed.chunks.at(-1), { type: "finish", finishReason: "other" })
        assert.strictEqual((yield* getRun(first.runId)).status, "waiting_for_approval")
        const [pending] = yield* pendingOf(first.runId)
        assert.strictEqual(pending.kind, "approval_request")
        assert.strictEqual(pending.toolName, "write_file")
        assert.deepStrictEqual(pending.input, { path: "out.txt", content: "approved\n" })
        assert.deepStrictEqual(readdirSync(root), [])
        // Approved: the call reaches the runner, the file has the exact content.
        assert.strictEqual((yield* approveAll(first.runId)).length, 1)
        const resumed = yield* streamOf(first.runId)
        assert.deepStrictEqual(outputsOf(resumed.chunks), [{ path: "out.txt", bytes: 9 }])
        assert.strictEqual((yield* getRun(first.runId)).status, "completed")
        assert.strictEqual(readFileSync(join(root, "out.txt"), "utf8"), "approved\n")

        // Denied: the runner never gets the call and the model reads the reason.
        yield* hooks.answerWith(reply(200, { decision: "deny", reason: "Not here." }))
        const second = yield* send(thread.id, toolStep("write_file", { path: "denied.txt", content: "x" }))
        const [callId] = callIdsOf(second.parsed.chunks)
        assert.deepStrictEqual(deniedChunks(second.parsed.chunks), [
          { type: "data-svc-tool-denied", data: { toolCallId: callId, toolName: "write_file", reason: "Not here." } },
          { type: "tool-output-denied", toolCallId: callId }
        ])
        assert.strictEqual(textOf(second.parsed.message), "Result: Not here.")
        assert.strictEqual((yield* getRun(second.runId)).status, "completed")
        assert.isFalse(existsSync(join(root, "denied.txt")))

        // autoAllow: read_file runs on the runner with no review (the hook, still denying, is not asked).
        writeFileSync(join(root, "notes.txt"), "hi\n")
        const before = (yield* hooks.received).length
        const third = yield* send(thread.id, toolStep("read_file", { path: "notes.txt" }))
        assert.deepStrictEqual(outputsOf(third.parsed.chunks), [
          { path: "notes.txt", content: "hi\n", startLine: 1, endLine: 1, totalLines: 1, truncated: false }
        ])
        assert.strictEqual((yield* getRun(third.runId)).status, "completed")
        assert.strictEqual((yield* hooks.received).length, before)
      }).pipe(Effect.scoped),
    runnerTimeout
  )

  it.effect("a worker writes in the root's remote workspace; an advisor has no tools", () =>
    Effect.gen(function*() {
      const { root, thread } = yield* served({ capabilities: { subagents: true } })
      const { parsed } = yield* send(
        thread.id,
        [
          delegate(
            {
              label: "writer",
              prompt: [toolStep("write_file", { path: "from-worker.txt", content: "worker\n" }), "/text wrote"].join(
                "\n"
              )
            },
            { label: "thinker", prompt: "/show-tools", role: "advisor" }
          ),
          "/text all done"
        ].join("\n")
      )
      const tasks = tasksOf(parsed.chunks)
      assert.deepStrictEqual(outputsOf(parsed.chunks), [
        { workerRef: tasks[0].workerRef, answer: "wrote" },
        { workerRef: tasks[1].workerRef, answer: "[]" }
      ])
      assert.strictEqual(readFileSync(join(root, "from-worker.txt"), "utf8"), "worker\n")
      assert.strictEqual(textOf(parsed.message), "all done")
    }).pipe(Effect.scoped), runnerTimeout)
})

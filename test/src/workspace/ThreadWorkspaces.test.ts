/**
 * A thread's workspace opened by several runs at once (a root and its
 * workers) on the real sandbox: they share one open on the node, so a file
 * one writes is the other's, and the egress proxy stays up for the run still
 * there when another leaves (two opens side by side would each start a proxy
 * on the workspace's one socket, and the first to close would take the
 * socket with it).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import type { ManagedWorkspace } from "../../../domain/Agent.ts"
import { Agents } from "../../../src/agents/Agents.ts"
import { Threads } from "../../../src/threads/Threads.ts"
import type { ToolFamily } from "../../../src/tools/ToolFamily.ts"
import { ThreadWorkspaces } from "../../../src/workspace/ThreadWorkspaces.ts"
import { listen } from "../../support/HttpPeer.ts"
import * as RunStage from "../../support/RunStage.ts"

/** Loopback is reachable through the proxy when listed exactly (SVC_ALLOW_PRIVATE_URLS in tests). */
const spec: ManagedWorkspace = {
  type: "managed",
  shell: true,
  network: { mode: "restricted", allowDomains: ["localhost"] }
}

/** Snapshot problems are not expected here. */
const report: Parameters<ThreadWorkspaces["Service"]["open"]>[3] = {
  warn: (message) => Effect.die(`unexpected snapshot warning: ${message}`),
  unavailable: (error) => Effect.die(error)
}

const call = (tools: ToolFamily, name: string, input: unknown) =>
  Effect.map(tools.call(name, input, { id: "tc_test", step: 0 }) ?? Effect.die(`${name} is no tool`), (o) => o.output)

layer(RunStage.layer, { timeout: RunStage.setupTimeout })("ThreadWorkspaces", (it) => {
  it.effect("two runs using a workspace at once share it: one's file is the other's, and the proxy stays up for the one still there when the other leaves", () =>
    Effect.gen(function*() {
      const port = yield* listen((_req, res) => res.end("hello from the host"))
      const agent = yield* Effect.orDie((yield* Agents).create(RunStage.principal, { workspace: spec }))
      const thread = yield* Effect.orDie((yield* Threads).create(RunStage.principal, { agentId: agent.id }))
      const workspaces = yield* ThreadWorkspaces
      const [first, second] = [yield* Scope.make(), yield* Scope.make()]
      const root = yield* Scope.provide(first)(workspaces.open(thread.id, RunStage.principal, spec, report))
      const worker = yield* Scope.provide(second)(workspaces.open(thread.id, RunStage.principal, spec, report))

      yield* call(worker, "write_file", { path: "notes/from-worker.txt", content: "written by the worker\n" })
      assert.include(
        JSON.stringify(yield* call(root, "read_file", { path: "notes/from-worker.txt" })),
        "written by the worker"
      )

      // Through the egress proxy (the sandbox's only way out), by the exactly listed name.
      const curl = { command: `NO_PROXY= no_proxy= curl -s --max-time 5 http://localhost:${port}/ || echo failed` }
      const expected = { exitCode: 0, stdout: "hello from the host", stderr: "" }
      assert.deepStrictEqual(yield* call(root, "bash", curl), expected)
      yield* Scope.close(second, Exit.void)
      assert.deepStrictEqual(yield* call(root, "bash", curl), expected)
      yield* Scope.close(first, Exit.void)
    }).pipe(Effect.scoped))
})

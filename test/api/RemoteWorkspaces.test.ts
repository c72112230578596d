/**
 * Remote workspaces with real runner processes (issue 31): `agent-service
 * environment run` on loopback serving a temporary directory. A run reads,
 * edits and runs a command there (the same outputs as a managed workspace);
 * a path escape and a symlink escape are refused; a second environment's
 * runner never receives the first's calls; a runner killed mid-command gives
 * `outcome_unknown` and the command never runs twice, and a new runner then
 * serves the environment; rotating the token stops a runner (exit 1); with no
 * runner, a call fails with `workspace_unavailable` after the wait (TestClock).
 * The test waits on events only: a file made by the runner (inotify), the
 * service's NOTIFY of a queued call (a SQL client of the test's own).
 */
import { PgClient } from "@effect/sql-pg"
import { assert } from "@effect/vitest"
import { Deferred, Effect, Fiber, Queue } from "effect"
import { TestClock } from "effect/testing"
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  watch,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { EnvironmentWithToken } from "../../domain/Environment.ts"
import { channel } from "../../src/environments/EnvironmentSignals.ts"
import { agentWithThread, failuresOf, getThread, outputsOf, send, toolStep } from "../support/Conversation.ts"
import * as RunnerProcess from "../support/RunnerProcess.ts"
import * as TestServer from "../support/TestServer.ts"

const { expectOk, layerWithSql, request, suiteWith, TestApi } = TestServer

const environment = (name: string) =>
  Effect.flatMap(
    request("POST", "/v1/environments", { body: { name } }),
    (r) => expectOk(r, 200, EnvironmentWithToken)
  )

/** Runner processes take seconds to start on a loaded machine (node loads the CLI). */
const runnerTimeout = 90_000

const tempRoot = () => mkdtempSync(join(tmpdir(), "svc-runner-"))

const readdir = (dir: string) => readdirSync(dir).sort()

/** Once the runner's command (another process) created `path`: told by a watch of its directory (inotify). */
const untilExists = (path: string): Effect.Effect<void> =>
  Effect.scoped(Effect.gen(function*() {
    const made = yield* Deferred.make<void>()
    const look = () => {
      if (existsSync(path)) Deferred.doneUnsafe(made, Effect.void)
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => watch(dirname(path), look)),
      (watcher) => Effect.sync(() => watcher.close())
    )
    // Watched before looking: made before the watch, it is seen here; after, by the watch.
    look()
    yield* Deferred.await(made)
  }))

/** Once the service announced `payload` (NOTIFY on the environments' channel, heard by the test's own client). */
const untilAnnounced = (
  announced: Queue.Dequeue<{ readonly payload: string }, unknown>,
  payload: string
): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.orDie(Queue.take(announced)),
    (n) => n.payload === payload ? Effect.void : untilAnnounced(announced, payload)
  )

/** An environment, a runner of it serving a new directory, and a thread of an agent working there. */
const served = (shell = true) =>
  Effect.gen(function*() {
    const env = yield* environment("box")
    const root = tempRoot()
    const url = (yield* TestApi).url
    const runner = yield* RunnerProcess.start({ url, token: env.token, root })
    yield* runner.connected
    const { thread } = yield* agentWithThread({ workspace: { type: "remote", environmentId: env.id, shell } })
    return { env, root, runner, thread, url }
  })

suiteWith(layerWithSql())("remote workspaces", (it) => {
  it.effect(
    "a run reads, edits and runs a command in the runner's root; escapes are refused; another environment's runner gets nothing",
    () =>
      Effect.gen(function*() {
        const { env, root, thread } = yield* served()
        assert.strictEqual(thread.workspace?.status, "active")
        writeFileSync(join(root, "notes.txt"), "hello\n")
        const bystander = tempRoot()
        const other = yield* environment("other")
        const otherRunner = yield* RunnerProcess.start({
          url: (yield* TestApi).url,
          token: other.token,
          root: bystander
        })
        yield* otherRunner.connected
        const { parsed } = yield* send(
          thread.id,
          [
            toolStep("read_file", { path: "notes.txt" }),
            toolStep("edit_file", { path: "notes.txt", oldString: "hello", newString: "bye" }),
            toolStep("bash", { command: "cat notes.txt; echo made > out.txt" }),
            "/text done"
          ].join("\n")
        )
        assert.deepStrictEqual(outputsOf(parsed.chunks), [
          { path: "notes.txt", content: "hello\n", startLine: 1, endLine: 1, totalLines: 1, truncated: false },
          { path: "notes.txt", replacements: 1 },
          { exitCode: 0, stdout: "bye\n", stderr: "" }
        ])
        assert.strictEqual(readFileSync(join(root, "notes.txt"), "utf8"), "bye\n")
        assert.strictEqual(readFileSync(join(root, "out.txt"), "utf8"), "made\n")
        // Paths out of the root and symlinks leading out are refused; an agent without shell has no bash.
        const outside = tempRoot()
        writeFileSync(join(outside, "secret.txt"), "not yours\n")
        symlinkSync(outside, join(root, "link"))
        mkdirSync(join(root, "sub"))
        const noShell = yield* agentWithThread({ workspace: { type: "remote", environmentId: env.id, shell: false } })
        const escapes = yield* send(
          noShell.thread.id,
          [
            toolStep("read_file", { path: "../secret.txt" }),
            toolStep("read_file", { path: "link/secret.txt" }),
            toolStep("write_file", { path: "link/planted.txt", content: "x" }),
            toolStep("grep", { pattern: "not", path: "sub/../link" }),
            toolStep("bash", { command: "true" }),
            "/text done"
          ].join("\n")
        )
        const failures = failuresOf(escapes.parsed.chunks).map((f) => f.error)
        assert.deepStrictEqual(failures.slice(0, 4), [
          { code: "workspace_error", message: "'../secret.txt' is outside the workspace" },
          { code: "workspace_error", message: "'link/secret.txt' resolves outside the workspace" },
          { code: "workspace_error", message: "'link/planted.txt' resolves outside the workspace" },
          { code: "workspace_error", message: "'link' resolves outside the workspace" }
        ])
        assert.strictEqual(failures[4]?.code, "unknown_tool")
        assert.deepStrictEqual(readdir(outside), ["secret.txt"])
        // The other environment's runner served nothing: its directory is as it was.
        assert.deepStrictEqual(readdir(bystander), [])
      }).pipe(Effect.scoped),
    runnerTimeout
  )

  it.effect(
    "a runner killed mid-command: outcome_unknown, never run twice; a new runner serves on",
    () =>
      Effect.gen(function*() {
        const { env, root, runner, thread, url } = yield* served()
        const running = yield* Effect.forkChild(send(
          thread.id,
          [
            toolStep("bash", { command: "echo once >> started.txt; sleep 3; echo late >> ran.txt" }),
            "/text after"
          ].join("\n")
        ))
        yield* untilExists(join(root, "started.txt"))
        runner.child.kill("SIGKILL")
        // Its open poll's connection closes (settled at once); killed between two polls, it is late for its next
        // poll (5 s); else its heartbeat ages (45 s). The run checks its runner's liveness 15 s after the call was
        // sent, then every 15 s, on the service's clock (due times fixed in advance: a check whose time passed
        // before the run began to wait is made at once). A minute is past each way of being found gone.
        yield* TestClock.adjust("1 minute")
        const { parsed } = yield* Fiber.join(running)
        const [failure] = failuresOf(parsed.chunks)
        assert.strictEqual(failure?.error.code, "outcome_unknown")
        const again = yield* RunnerProcess.start({ url, token: env.token, root })
        yield* again.connected
        const next = yield* send(thread.id, [toolStep("read_file", { path: "started.txt" }), "/text ok"].join("\n"))
        assert.deepStrictEqual(outputsOf(next.parsed.chunks), [
          { path: "started.txt", content: "once\n", startLine: 1, endLine: 1, totalLines: 1, truncated: false }
        ])
        assert.strictEqual((yield* getThread(thread.id)).workspace?.status, "active")
      }).pipe(Effect.scoped),
    runnerTimeout
  )

  it.effect("rotating the token stops the runner using the old one", () =>
    Effect.gen(function*() {
      const { env, runner } = yield* served()
      yield* request("POST", `/v1/environments/${env.id}/rotate-token`)
      assert.strictEqual(yield* runner.exited, 1)
      assert.include(runner.stderr(), "the service refused the environment token")
      assert.notInclude(runner.stderr(), env.token)
    }).pipe(Effect.scoped), runnerTimeout)

  it.effect("no runner: the call fails with workspace_unavailable after the wait", () =>
    Effect.gen(function*() {
      const env = yield* environment("empty")
      const { thread } = yield* agentWithThread({ workspace: { type: "remote", environmentId: env.id } })
      assert.deepStrictEqual(thread.workspace, { status: "unavailable" })
      const announced = yield* Effect.orDie((yield* PgClient.PgClient).listen(channel))
      const running = yield* Effect.forkChild(
        send(thread.id, [toolStep("glob", { pattern: "*" }), "/text x"].join("\n"))
      )
      // Once the call is queued, the service's clock moves past the wait (60 s from the call, whether or not the
      // run has begun to wait yet).
      yield* untilAnnounced(announced, `call:${env.id}`)
      yield* TestClock.adjust("60 seconds")
      const { parsed } = yield* Fiber.join(running)
      const [failure] = failuresOf(parsed.chunks)
      assert.strictEqual(failure?.error.code, "workspace_unavailable")
    }).pipe(Effect.scoped))
})

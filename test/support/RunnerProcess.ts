/**
 * A real runner of an environment: `node src/cli.ts environment run --url
 * <service> --root <dir>` as a child process with its token in
 * SVC_ENVIRONMENT_TOKEN, killed when its scope closes. `connected` waits for
 * its "connected to" line on stderr.
 */
import { Deferred, Effect, type Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

export interface RunnerProcess {
  readonly child: ChildProcess
  /** Everything it printed on stderr so far. */
  readonly stderr: () => string
  /** Completes once it said it is connected. */
  readonly connected: Effect.Effect<void>
  /** Its exit code, once it exited. */
  readonly exited: Effect.Effect<number | null>
}

export const start = (
  options: { readonly url: string; readonly token: string; readonly root: string }
): Effect.Effect<RunnerProcess, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const connected = yield* Deferred.make<void>()
      const exited = yield* Deferred.make<number | null>()
      const child = spawn(
        process.execPath,
        ["src/cli.ts", "environment", "run", "--url", options.url, "--root", options.root],
        { cwd: root, env: { ...process.env, SVC_ENVIRONMENT_TOKEN: options.token }, stdio: ["ignore", "pipe", "pipe"] }
      )
      let stderr = ""
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString()
        if (stderr.includes("[runner] connected to")) Deferred.doneUnsafe(connected, Effect.void)
      })
      child.once("exit", (code) => Deferred.doneUnsafe(exited, Effect.succeed(code)))
      return { child, stderr: () => stderr, connected: Deferred.await(connected), exited: Deferred.await(exited) }
    }),
    (p) =>
      Effect.suspend(() => {
        if (p.child.exitCode !== null || p.child.signalCode !== null) return Effect.void
        p.child.kill("SIGKILL")
        return Effect.asVoid(p.exited)
      })
  )

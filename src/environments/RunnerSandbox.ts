/**
 * What the workspace tools run with on an environment's runner (issue 31):
 * the `exec` of the Sandbox contract (src/workspace/Sandbox.ts) as a plain
 * bash in the runner's root, so that the tools of src/workspace/WorkspaceTools.ts
 * run here unchanged (one definition, two executors). The file tools' scripts
 * confine every path to `$SVC_ROOT`, the root resolved (realpath), so a path
 * out of it or a symlink leading out is refused as in a managed workspace;
 * each stdout and stderr is capped at the workspace's `outputBytes`; a command
 * is killed at its wall time. Commands run as the runner's user with the
 * runner's environment, less the environment token. The rest of the contract
 * (services, piped programs, snapshots) has no meaning on a runner.
 */
import { Effect } from "effect"
import { join } from "node:path"
import * as ExecCheck from "../workspace/ExecCheck.ts"
import type { ExecRequest, ExecResult, Sandbox, Workspace } from "../workspace/Sandbox.ts"
import * as SandboxProcess from "../workspace/SandboxProcess.ts"
import { WorkspaceUnavailable } from "../workspace/WorkspaceUnavailable.ts"

/** Variables of the runner's environment commands never see. */
export const hiddenVariables = ["SVC_ENVIRONMENT_TOKEN"]

const notOnRunner = (what: string) =>
  Effect.fail(new WorkspaceUnavailable({ message: `${what} is not available in a remote workspace` }))

export const make = (root: string, baseEnv: Readonly<Record<string, string | undefined>>): Sandbox["Service"] => {
  const inherited = Object.fromEntries(
    Object.entries(baseEnv).flatMap(([k, v]) => (v === undefined || hiddenVariables.includes(k) ? [] : [[k, v]]))
  )
  const exec = (workspace: Workspace, request: ExecRequest): Effect.Effect<ExecResult> =>
    Effect.gen(function*() {
      const { limits } = workspace
      const timeoutMs = ExecCheck.wallTime(workspace, request.timeoutMs)
      const cwd = ExecCheck.place(request)
      if ("error" in cwd) return ExecCheck.refused(cwd.error)
      // The working directory is confined like a file tool's path (cd refuses one leading out).
      const script = `${confineCwd}cd -- "$D" && exec bash -c "$SVC_COMMAND"`
      const running = yield* SandboxProcess.start({
        file: "bash",
        args: ["-c", script],
        env: {
          ...inherited,
          ...request.env,
          SVC_ROOT: root,
          SVC_CWD: join(root, cwd.relative),
          SVC_COMMAND: request.command
        },
        stdin: request.stdin,
        outputBytes: request.outputBytes ?? limits.outputBytes,
        reaper: false
      })
      const finished = yield* running.wait.pipe(
        Effect.timeoutOption(timeoutMs),
        Effect.onInterrupt(() => running.killGroup)
      )
      if (finished._tag === "Some") {
        const f = finished.value
        return f.spawnError === undefined
          ? { exitCode: f.exitCode, stdout: f.stdout, stderr: f.stderr, truncated: f.truncated }
          : { exitCode: 127, stdout: "", stderr: `bash could not start: ${f.spawnError}\n`, truncated: false }
      }
      yield* running.killGroup
      const f = yield* running.wait
      return {
        exitCode: f.exitCode,
        stdout: f.stdout,
        stderr: f.stderr,
        truncated: f.truncated,
        limit: { kind: "wall_time" as const, message: `the command ran longer than ${timeoutMs} ms and was killed` }
      }
    })
  return {
    open: () => notOnRunner("opening a sandbox"),
    egressSocketPath: () => notOnRunner("a network proxy"),
    exec,
    startService: () => notOnRunner("a declared service"),
    startPiped: () => notOnRunner("a piped program"),
    portsDirOf: () => join(root, ".svc", "ports"),
    diskUsage: () => Effect.succeed(0),
    remove: () => Effect.void
  }
}

const confineCwd = `D=$(realpath -m -- "$SVC_CWD") || exit 2
case "$D" in "$SVC_ROOT"|"$SVC_ROOT"/*) ;; *) echo "cwd: resolves outside the workspace" >&2; exit 2 ;; esac
`

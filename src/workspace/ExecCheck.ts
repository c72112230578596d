/**
 * What every executor of workspace commands checks of a request before it
 * runs anything (the managed sandbox, src/workspace/SandboxLive.ts, and an
 * environment's runner, src/environments/RunnerSandbox.ts): the working
 * directory inside the workspace, the environment's variable names, and the
 * wall time within the workspace's bounds. One place, so both refuse the
 * same requests with the same words.
 */
import type { Workspace } from "./Sandbox.ts"
import * as WorkspacePath from "./WorkspacePath.ts"

const validEnvName = /^[A-Za-z_][A-Za-z0-9_]*$/

interface Request {
  readonly cwd?: string | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
}

/** The request's working directory, or why it is refused (`cwd: ...` or `env: ...`). */
export const place = (request: Request): { readonly inner: string; readonly relative: string } | {
  readonly error: string
} => {
  const cwd = WorkspacePath.resolve(request.cwd ?? ".")
  if ("error" in cwd) return { error: `cwd: ${cwd.error}` }
  const badName = Object.keys(request.env ?? {}).find((name) => !validEnvName.test(name))
  return badName === undefined ? cwd : { error: `env: '${badName}' is not a valid environment variable name` }
}

/** A command's wall time: the one asked for (or the default) within 1 ms and the workspace's longest. */
export const wallTime = (workspace: Workspace, requested: number | undefined): number =>
  Math.max(1, Math.min(requested ?? workspace.limits.defaultTimeoutMs, workspace.limits.maxTimeoutMs))

/** A command refused before it ran, as the exec contract answers it. */
export const refused = (error: string) => ({ exitCode: 2, stdout: "", stderr: `${error}\n`, truncated: false })

/**
 * Whole files of any content, in and out of a workspace: what attachments
 * (placed for the agent) and `workspace_export_artifact` (read back to store
 * and deliver) need, where the file tools deal in text. Like every file
 * operation they run inside the sandbox (see WorkspaceFiles.ts for why), the
 * bytes travelling as base64 through the script's stdin and stdout.
 */
import { Effect } from "effect"
import type { Workspace } from "./Sandbox.ts"
import {
  checked,
  confine,
  type Failure,
  FileToolError,
  pathEnv,
  replaceScript,
  resolved,
  run,
  type Sandboxed
} from "./WorkspaceFiles.ts"

const writeScript = replaceScript("base64 -d")
const readScript = `${confine}[ -e "$R" ] || { echo "no such file: $SVC_REL" >&2; exit 4; }
[ -f "$R" ] || { echo "not a regular file: $SVC_REL" >&2; exit 5; }
size=$(stat -c %s -- "$R") || exit 4
[ "$size" -le "$SVC_MAX" ] || { echo "$SVC_REL is $size bytes, over the $SVC_MAX-byte limit" >&2; exit 6; }
base64 -w0 -- "$R"
`

/** Writes `bytes` as the file `path` (parents created, an existing file replaced). */
export const writeBytes = (
  sandbox: Sandboxed,
  workspace: Workspace,
  path: string,
  bytes: Uint8Array
): Effect.Effect<string, Failure> =>
  Effect.gen(function*() {
    const p = yield* resolved(path)
    if (p.relative === ".") return yield* FileToolError.of("give a file path, not the workspace root")
    const stdin = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")
    yield* Effect.flatMap(run(sandbox, workspace, writeScript, pathEnv(p), { stdin }), (r) => checked(r))
    return p.relative
  })

/** The bytes of the file `path`, refused when it is larger than `maxBytes`. */
export const readBytes = (
  sandbox: Sandboxed,
  workspace: Workspace,
  path: string,
  maxBytes: number
): Effect.Effect<{ readonly path: string; readonly bytes: Uint8Array }, Failure> =>
  Effect.gen(function*() {
    const p = yield* resolved(path)
    const env = { ...pathEnv(p), SVC_MAX: String(maxBytes) }
    const result = yield* Effect.flatMap(
      run(sandbox, workspace, readScript, env, { outputBytes: Math.ceil(maxBytes / 3) * 4 + 16 }),
      (r) => checked(r)
    )
    if (result.truncated) return yield* FileToolError.of(`${p.relative} is over the ${maxBytes}-byte limit`)
    return { path: p.relative, bytes: new Uint8Array(Buffer.from(result.stdout, "base64")) }
  })

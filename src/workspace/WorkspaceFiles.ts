/**
 * The file operations of the workspace tools, each one run INSIDE the
 * sandbox as a small bash script, never by the service on the host.
 *
 * Why inside: the workspace directory is writable by the sandbox user, so
 * file I/O done there by the (root) service is a symlink attack surface: a
 * link planted by a command (`notes -> /etc/shadow`, or a directory swapped
 * for a link between check and use) would make the service read or write
 * host files with its own rights. Inside the sandbox the same link can only
 * reach what the sandbox itself sees (read-only system files), with the
 * sandbox user's rights, so no race can gain anything. The scripts still
 * resolve every path with `realpath` and refuse one that lands outside
 * /workspace, so the tools keep their contract (paths relative to the root).
 * Arguments travel in environment variables and content on stdin, never
 * spliced into the script; the root is `$SVC_ROOT` (/workspace here; an
 * environment's runner runs the same scripts in its own root, issue 31). A failing script exits 3 (path refused), 4 (not
 * found) or 5 (wrong kind) with the reason on stderr. A write replaces its
 * file at once (replaceScript): the runs of a tree share the workspace.
 */
import { Data, Effect } from "effect"
import { mountPoint } from "./BwrapCommand.ts"
import type { ExecResult, Sandbox, Workspace } from "./Sandbox.ts"
import * as WorkspacePath from "./WorkspacePath.ts"
import type { WorkspaceUnavailable } from "./WorkspaceUnavailable.ts"

/** A tool call that cannot be done as asked; the model sees the message. */
export class FileToolError extends Data.TaggedError("FileToolError")<{ readonly message: string }> {
  static of(message: string): FileToolError {
    return new FileToolError({ message })
  }
}

export type Sandboxed = Sandbox["Service"]
export type Failure = FileToolError | WorkspaceUnavailable

export const defaultReadLines = 2_000
/** edit_file reads the whole file through the sandbox; larger files are refused. */
export const maxEditBytes = 1024 * 1024
export const maxGlobResults = 1_000

export const confine = `confine() {
  local r
  r=$(realpath -m -- "$1") || { echo "cannot resolve '$SVC_REL'" >&2; exit 3; }
  case "$r" in "$SVC_ROOT"|"$SVC_ROOT"/*) printf '%s' "$r" ;; *) echo "'$SVC_REL' resolves outside the workspace" >&2; exit 3 ;; esac
}
R=$(confine "$SVC_ROOT/$SVC_REL") || exit 3
`

const readScript = `${confine}[ -e "$R" ] || { echo "no such file: $SVC_REL" >&2; exit 4; }
[ -f "$R" ] || { echo "not a regular file: $SVC_REL" >&2; exit 5; }
LC_ALL=C awk -v s="$SVC_START" -v n="$SVC_LIMIT" 'NR >= s && NR < s + n { print } END { print NR > "/dev/stderr" }' "$R"
`
const catScript = `${confine}[ -f "$R" ] || { echo "no such file: $SVC_REL" >&2; exit 4; }
cat -- "$R"
`
/**
 * Replaces the file at once: the content (from `produce`, reading stdin) goes to a new file beside
 * it, which is then renamed over it (rename is atomic). So a reader, a command or another run of the
 * same workspace (a root and its workers share it) sees the old content or the new, never a part
 * of it; two writes of one file at once: the later rename wins. An existing file keeps its mode.
 */
export const replaceScript = (produce: string) =>
  `${confine}[ -d "$R" ] && { echo "is a directory: $SVC_REL" >&2; exit 5; }
D=$(dirname -- "$R") && mkdir -p -- "$D" || exit 1
T=$(mktemp -- "$D/.svc-write.XXXXXX") || exit 1
trap 'rm -f -- "$T"' EXIT
if [ -f "$R" ]; then chmod --reference="$R" -- "$T"; else chmod "$(printf '%o' $(( 0666 & ~$(umask) )))" -- "$T"; fi
${produce} > "$T" && mv -f -T -- "$T" "$R"
`
const writeScript = replaceScript("cat")
const globScript = `${confine}[ -d "$R" ] || { echo "no such directory: $SVC_REL" >&2; exit 4; }
cd -- "$R" && shopt -s globstar nullglob extglob && IFS= && export LC_ALL=C
for f in $SVC_PATTERN; do if [ -d "$f" ]; then printf '%s/\\0' "$f"; else printf '%s\\0' "$f"; fi; done
`
const grepScript = `${confine}[ -e "$R" ] || { echo "no such file or directory: $SVC_REL" >&2; exit 4; }
cd -- "$SVC_ROOT" && rel=$(realpath --relative-to="$SVC_ROOT" -- "$R")
if [ -n "$SVC_GLOB" ]; then set -- --include="$SVC_GLOB"; else set --; fi
LC_ALL=C grep -rnIZE --color=never --exclude-dir=.git "$@" -e "$SVC_PATTERN" -- "$rel"
`

export const run = (
  sandbox: Sandboxed,
  workspace: Workspace,
  script: string,
  env: Record<string, string>,
  extra: { stdin?: string; outputBytes?: number } = {}
) => sandbox.exec(workspace, { command: script, env: { SVC_ROOT: mountPoint, ...env }, timeoutMs: 60_000, ...extra })

/** A result of a script as a failure when it did not succeed (`okCodes` also count as success). */
export const checked = (
  result: ExecResult,
  okCodes: ReadonlyArray<number> = [0]
): Effect.Effect<ExecResult, FileToolError> =>
  result.limit !== undefined
    ? Effect.fail(FileToolError.of(result.limit.message))
    : okCodes.includes(result.exitCode)
    ? Effect.succeed(result)
    : Effect.fail(FileToolError.of(result.stderr.trim() || `failed with exit code ${result.exitCode}`))

export const resolved = (
  path: string
): Effect.Effect<{ readonly inner: string; readonly relative: string }, FileToolError> => {
  const r = WorkspacePath.resolve(path)
  return "error" in r ? Effect.fail(FileToolError.of(r.error)) : Effect.succeed(r)
}

/** The path as the scripts take it: relative to `$SVC_ROOT` (the sandbox's mount point, or a runner's root). */
export const pathEnv = (p: { readonly inner: string; readonly relative: string }) => ({ SVC_REL: p.relative })

export interface ReadResult {
  readonly path: string
  readonly content: string
  /** 1-based, inclusive; `endLine < startLine` when the range holds no line. */
  readonly startLine: number
  readonly endLine: number
  readonly totalLines: number
  /** The range was longer than the output cap: read on from a later offset. */
  readonly truncated: boolean
}

export const readFile = (
  sandbox: Sandboxed,
  workspace: Workspace,
  input: { readonly path: string; readonly offset?: number | undefined; readonly limit?: number | undefined }
): Effect.Effect<ReadResult, Failure> =>
  Effect.gen(function*() {
    const p = yield* resolved(input.path)
    const start = Math.max(1, Math.floor(input.offset ?? 1))
    const limit = Math.max(1, Math.floor(input.limit ?? defaultReadLines))
    const result = yield* Effect.flatMap(
      run(sandbox, workspace, readScript, { ...pathEnv(p), SVC_START: String(start), SVC_LIMIT: String(limit) }),
      (r) => checked(r)
    )
    const totalLines = Number.parseInt(result.stderr.trim().split("\n").at(-1) ?? "0", 10) || 0
    const shown = result.stdout.length === 0
      ? 0
      : result.stdout.split("\n").length - (result.stdout.endsWith("\n") ? 1 : 0)
    return {
      path: p.relative,
      content: result.stdout,
      startLine: start,
      endLine: start + shown - 1,
      totalLines,
      truncated: result.truncated
    }
  })

export const writeFile = (
  sandbox: Sandboxed,
  workspace: Workspace,
  input: { readonly path: string; readonly content: string }
): Effect.Effect<{ readonly path: string; readonly bytes: number }, Failure> =>
  Effect.gen(function*() {
    const p = yield* resolved(input.path)
    if (p.relative === ".") return yield* FileToolError.of("give a file path, not the workspace root")
    yield* Effect.flatMap(run(sandbox, workspace, writeScript, pathEnv(p), { stdin: input.content }), (r) => checked(r))
    return { path: p.relative, bytes: Buffer.byteLength(input.content) }
  })

export const editFile = (
  sandbox: Sandboxed,
  workspace: Workspace,
  input: {
    readonly path: string
    readonly oldString: string
    readonly newString: string
    readonly replaceAll?: boolean | undefined
  }
): Effect.Effect<{ readonly path: string; readonly replacements: number }, Failure> =>
  Effect.gen(function*() {
    const p = yield* resolved(input.path)
    if (input.oldString.length === 0) {
      return yield* FileToolError.of("oldString is empty; use write_file to create or overwrite a file")
    }
    if (input.oldString === input.newString) {
      return yield* FileToolError.of("oldString and newString are the same; nothing to change")
    }
    const current = yield* Effect.flatMap(
      run(sandbox, workspace, catScript, pathEnv(p), { outputBytes: maxEditBytes }),
      (r) => checked(r)
    )
    if (current.truncated) {
      return yield* FileToolError.of(`${p.relative} is larger than ${maxEditBytes} bytes; edit it with bash instead`)
    }
    if (current.stdout.includes("\uFFFD")) {
      return yield* FileToolError.of(`${p.relative} is not UTF-8 text; edit it with bash instead`)
    }
    const count = current.stdout.split(input.oldString).length - 1
    if (count === 0) {
      return yield* FileToolError.of(
        `oldString was not found in ${p.relative}; read the file and copy the text exactly`
      )
    }
    if (count > 1 && input.replaceAll !== true) {
      return yield* FileToolError.of(
        `oldString occurs ${count} times in ${p.relative}; give more surrounding text to make it unique, or set replaceAll`
      )
    }
    const content = input.replaceAll === true
      ? current.stdout.split(input.oldString).join(input.newString)
      : current.stdout.replace(input.oldString, () => input.newString)
    yield* Effect.flatMap(run(sandbox, workspace, writeScript, pathEnv(p), { stdin: content }), (r) => checked(r))
    return { path: p.relative, replacements: count }
  })

const badPattern = (pattern: string): string | undefined =>
  pattern.startsWith("/")
    ? "the pattern must be relative to the workspace (or to `path`)"
    : pattern.split("/").includes("..")
    ? "the pattern must not contain '..'"
    : pattern.length === 0
    ? "the pattern is empty"
    : undefined

export const glob = (
  sandbox: Sandboxed,
  workspace: Workspace,
  input: { readonly pattern: string; readonly path?: string | undefined }
): Effect.Effect<{ readonly matches: ReadonlyArray<string>; readonly truncated: boolean }, Failure> =>
  Effect.gen(function*() {
    const problem = badPattern(input.pattern)
    if (problem !== undefined) return yield* FileToolError.of(problem)
    const p = yield* resolved(input.path ?? ".")
    const result = yield* Effect.flatMap(
      run(sandbox, workspace, globScript, { ...pathEnv(p), SVC_PATTERN: input.pattern }),
      (r) => checked(r)
    )
    const names = result.stdout.split("\0").slice(0, result.truncated ? -1 : undefined).filter((n) => n.length > 0)
    const matches = names.map((n) => (p.relative === "." ? n : `${p.relative}/${n}`))
    return { matches: matches.slice(0, maxGlobResults), truncated: result.truncated || matches.length > maxGlobResults }
  })

export interface GrepMatch {
  readonly path: string
  readonly line: number
  readonly text: string
}

export const grep = (
  sandbox: Sandboxed,
  workspace: Workspace,
  input: { readonly pattern: string; readonly path?: string | undefined; readonly glob?: string | undefined }
): Effect.Effect<{ readonly matches: ReadonlyArray<GrepMatch>; readonly truncated: boolean }, Failure> =>
  Effect.gen(function*() {
    if (input.pattern.length === 0) return yield* FileToolError.of("the pattern is empty")
    const p = yield* resolved(input.path ?? ".")
    const env = { ...pathEnv(p), SVC_PATTERN: input.pattern, SVC_GLOB: input.glob ?? "" }
    // grep exits 1 when nothing matches: an empty result, not a failure.
    const result = yield* Effect.flatMap(run(sandbox, workspace, grepScript, env), (r) => checked(r, [0, 1]))
    const lines = result.stdout.split("\n").slice(0, result.truncated ? -1 : undefined).filter((l) => l.length > 0)
    const matches = lines.flatMap((record): Array<GrepMatch> => {
      const [file = "", rest = ""] = record.split("\0", 2)
      const colon = rest.indexOf(":")
      const line = Number.parseInt(rest.slice(0, colon), 10)
      return colon < 0 || Number.isNaN(line)
        ? []
        : [{ path: file.replace(/^\.\//, ""), line, text: rest.slice(colon + 1) }]
    })
    return { matches, truncated: result.truncated }
  })

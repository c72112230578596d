/**
 * The workspace tools as a tool family (src/tools/ToolFamily.ts): the file
 * tools `read_file`, `write_file`, `edit_file`, `glob`, `grep` with
 * `filesystem`, and `bash` with `shell` (issue 11; the names are public
 * contract: approvals and `autoAllow` name them). Paths are relative to the
 * workspace root. A tool that cannot do what was asked (a missing file, an
 * ambiguous edit, a limit hit) is an error result the model reads; a bash
 * command that exits non-zero is a successful result carrying the code. Every
 * string that comes out of the sandbox has the injected secret values masked.
 * No adapter policy: the agent's approvals (hook, autoAllow) apply as to any tool.
 * The family also keeps over-cap results of other tools whole (`spill`, into
 * `.svc/artifacts/`), written through the sandbox like write_file.
 */
import { Effect, Schema } from "effect"
import type { ConverterFailed } from "../documents/DocumentRuntime.ts"
import { documentTools } from "../documents/DocumentTools.ts"
import { mediaTools } from "../documents/MediaTools.ts"
import * as ToolDef from "../tools/ToolDef.ts"
import { SpillFailed, type ToolFamily } from "../tools/ToolFamily.ts"
import { Count, Flag, optional, Text } from "../tools/ToolInput.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import type { Sandbox, Workspace } from "./Sandbox.ts"
import { maskDeep, maskSecrets } from "./SecretMask.ts"
import * as Binary from "./WorkspaceBinaryFiles.ts"
import * as Files from "./WorkspaceFiles.ts"
import * as WorkspacePath from "./WorkspacePath.ts"
import type { WorkspaceUnavailable } from "./WorkspaceUnavailable.ts"

export interface WorkspaceToolsOptions {
  readonly sandbox: Sandbox["Service"]
  readonly workspace: Workspace
  /** `workspace.shell`: offer `bash` too. */
  readonly shell: boolean
  /** `workspace.documents`: offer the document tools (src/documents/DocumentTools.ts). */
  readonly documents?: boolean
  /** `workspace.mediaEditing`: offer `media_probe` and `media_edit` (src/documents/MediaTools.ts). */
  readonly mediaEditing?: boolean
  /** Set in the environment of every bash command (the workspace_env projections). */
  readonly env: Readonly<Record<string, string>>
  /** Values masked as `***` in everything the tools return (the secret ones among `env`). */
  readonly secrets: ReadonlyArray<string>
}

/** Where over-cap results of the run's other tools are kept whole (spec 4.6 rule 5), relative to the root. */
export const artifactsDir = ".svc/artifacts"

/** What a workspace tool runs with: the sandbox, and the masking of what comes out of it. */
interface WorkspaceCall {
  readonly sandbox: Sandbox["Service"]
  readonly workspace: Workspace
  readonly env: Readonly<Record<string, string>>
  readonly mask: (text: string, truncated?: boolean) => string
}

/** A result with the injected secrets masked in its output and its text. */
const ok = (ctx: WorkspaceCall, output: unknown, text: string) =>
  ToolOutcome.success(maskDeep(output, ctx.mask), ctx.mask(text))

const numbered = (content: string, start: number) =>
  content.split("\n").slice(0, content.endsWith("\n") ? -1 : undefined).map((line, i) => `${start + i}\t${line}`).join(
    "\n"
  )

/** Matches as the model reads them, saying how to narrow a list that was cut. */
const matchesText = (lines: ReadonlyArray<string>, truncated: boolean, narrow: string) =>
  (lines.length === 0 ? "No match." : lines.join("\n")) +
  (truncated ? `\n(more matches not shown; narrow the ${narrow})` : "")

const Path = Text("Path relative to the workspace root.")

const tool = <S extends ToolDef.Input, A>(
  config: ToolDef.Config<S> & {
    readonly handler: (
      input: S["Type"],
      ctx: WorkspaceCall
    ) => Effect.Effect<A | ToolOutcome.ToolOutcome, Files.FileToolError | WorkspaceUnavailable>
  }
) => ToolDef.make(config)

export const readFile = tool({
  name: "read_file",
  description:
    "Read a text file of the workspace. Lines come numbered (`N<TAB>line`). `offset` is the first line (1-based), `limit` the number of lines (default 2000).",
  input: Schema.Struct({
    path: Path,
    offset: optional(Count("First line to read, 1-based.")),
    limit: optional(Count("Number of lines to read."))
  }),
  handler: (input, ctx) =>
    Effect.map(Files.readFile(ctx.sandbox, ctx.workspace, input), (r) => {
      const more = r.truncated
        ? `\n(output cut at the size cap after line ${r.endLine}; read on with offset ${r.endLine + 1})`
        : r.endLine < r.totalLines
        ? `\n(lines ${r.startLine}-${r.endLine} of ${r.totalLines}; read on with offset ${r.endLine + 1})`
        : ""
      // Masked before the lines are numbered (a numbered secret would no longer match), and as
      // cut output when the read stopped at the cap.
      const content = ctx.mask(r.content, r.truncated)
      return ok(ctx, { ...r, content }, numbered(content, r.startLine) + more)
    })
})

export const writeFile = tool({
  name: "write_file",
  description: "Create or overwrite a file of the workspace with `content` (parent directories are created).",
  input: Schema.Struct({ path: Path, content: Text("The whole new content of the file.") }),
  handler: (input, ctx) =>
    Effect.map(
      Files.writeFile(ctx.sandbox, ctx.workspace, input),
      (r) => ok(ctx, r, `Wrote ${r.bytes} bytes to ${r.path}.`)
    )
})

export const editFile = tool({
  name: "edit_file",
  description:
    "Replace the exact text `oldString` with `newString` in a file. Fails when `oldString` is absent, or occurs more than once unless `replaceAll` is true.",
  input: Schema.Struct({
    path: Path,
    oldString: Text("Exact text to replace, whitespace included."),
    newString: Text("Replacement text."),
    replaceAll: optional(Flag("Replace every occurrence (default false)."))
  }),
  handler: (input, ctx) =>
    Effect.map(
      Files.editFile(ctx.sandbox, ctx.workspace, input),
      (r) => ok(ctx, r, `Replaced ${r.replacements} occurrence${r.replacements === 1 ? "" : "s"} in ${r.path}.`)
    )
})

export const glob = tool({
  name: "glob",
  description:
    "List the files and directories (with a trailing /) matching a bash glob pattern, `**` for any depth, e.g. `src/**/*.ts`. Hidden names match only when the pattern names them.",
  input: Schema.Struct({
    pattern: Text("Glob pattern."),
    path: optional(Text("Directory to search from, relative to the workspace root (default the root)."))
  }),
  handler: (input, ctx) =>
    Effect.map(
      Files.glob(ctx.sandbox, ctx.workspace, input),
      (r) => ok(ctx, r, matchesText(r.matches, r.truncated, "pattern"))
    )
})

export const grep = tool({
  name: "grep",
  description:
    "Search file contents with an extended regular expression (grep -E). Binary files and .git are skipped. Returns `path:line:text` lines.",
  input: Schema.Struct({
    pattern: Text("Extended regular expression."),
    path: optional(Text("File or directory to search, relative to the workspace root (default the root).")),
    glob: optional(Text("Only files whose name matches this glob, e.g. `*.ts`."))
  }),
  handler: (input, ctx) =>
    Effect.map(
      Files.grep(ctx.sandbox, ctx.workspace, input),
      (r) => ok(ctx, r, matchesText(r.matches.map((m) => `${m.path}:${m.line}:${m.text}`), r.truncated, "search"))
    )
})

export const bash = tool({
  name: "bash",
  description:
    "Run a command with bash in the workspace's sandbox (the workspace is the current directory and HOME; network, when the workspace has one, only through the HTTP(S)_PROXY set in the environment). Returns exitCode, stdout and stderr; a non-zero exit code is not an error.",
  input: Schema.Struct({
    command: Text("The command line."),
    timeoutMs: optional(Count("Wall time limit in milliseconds.")),
    cwd: optional(Text("Working directory relative to the workspace root."))
  }),
  handler: ({ command, cwd, timeoutMs }, ctx) =>
    Effect.gen(function*() {
      const at = WorkspacePath.resolve(cwd ?? ".")
      if ("error" in at) return yield* Files.FileToolError.of(`cwd: ${at.error}`)
      const maxMs = ctx.workspace.limits.maxTimeoutMs
      if (timeoutMs !== undefined && timeoutMs > maxMs) {
        return yield* Files.FileToolError.of(`timeoutMs must be between 1 and ${maxMs} in this workspace`)
      }
      const { sandbox, workspace } = ctx
      const result = yield* sandbox.exec(workspace, { command, cwd: at.relative, env: ctx.env, timeoutMs })
      const output = {
        exitCode: result.exitCode,
        stdout: ctx.mask(result.stdout, result.truncated),
        stderr: ctx.mask(result.stderr, result.truncated),
        ...(result.truncated ? { truncated: true } : {})
      }
      return result.limit === undefined
        ? ToolOutcome.success(output)
        : ToolOutcome.failure("workspace_limit", result.limit.message, { limit: result.limit.kind, ...output })
    })
})

export const fileTools = [readFile, writeFile, editFile, glob, grep]

export const make = (options: WorkspaceToolsOptions): ToolFamily => {
  const { sandbox, workspace } = options
  const mask = (text: string, truncated = false) => maskSecrets(text, options.secrets, { truncated })
  const ctx: WorkspaceCall = { sandbox, workspace, env: options.env, mask }
  const tools = [
    ...fileTools,
    ...(options.shell ? [bash] : []),
    ...(options.documents === true ? documentTools : []),
    ...(options.mediaEditing === true ? mediaTools : [])
  ]
  return ToolDef.family(tools, {
    context: () => ctx,
    recover: (e: Files.FileToolError | WorkspaceUnavailable | ConverterFailed) =>
      e._tag === "FileToolError"
        ? ToolOutcome.failure("workspace_error", mask(e.message))
        : e._tag === "ConverterFailed"
        ? ToolOutcome.failure(e.code, mask(e.message), e.details)
        : ToolOutcome.failure("workspace_unavailable", e.message),
    spill: (name, content) =>
      Files.writeFile(sandbox, workspace, { path: `${artifactsDir}/${name}`, content }).pipe(
        Effect.map((written) => written.path),
        Effect.mapError((e) => new SpillFailed({ message: mask(e.message) }))
      ),
    files: {
      write: (path, bytes) =>
        Binary.writeBytes(sandbox, workspace, path, bytes).pipe(
          Effect.mapError((e) => new SpillFailed({ message: mask(e.message) }))
        ),
      read: (path, maxBytes) =>
        Binary.readBytes(sandbox, workspace, path, maxBytes).pipe(
          Effect.mapError((e) => new SpillFailed({ message: mask(e.message) }))
        )
    }
  })
}

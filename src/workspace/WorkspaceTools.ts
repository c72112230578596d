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
import type { ToolSpec } from "../../domain/Conversation.ts"
import { errorOutcome, SpillFailed, type ToolFamily, type ToolOutcome } from "../tools/ToolFamily.ts"
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
  /** Set in the environment of every bash command (the workspace_env projections). */
  readonly env: Readonly<Record<string, string>>
  /** Values masked as `***` in everything the tools return (the secret ones among `env`). */
  readonly secrets: ReadonlyArray<string>
}

/** Where over-cap results of the run's other tools are kept whole (spec 4.6 rule 5), relative to the root. */
export const artifactsDir = ".svc/artifacts"

const str = (description: string) => ({ type: "string", description })
const int = (description: string) => ({ type: "integer", minimum: 1, description })
const object = (properties: Record<string, unknown>, required: ReadonlyArray<string>) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false
})

export const fileToolSpecs: ReadonlyArray<ToolSpec> = [
  {
    name: "read_file",
    description:
      "Read a text file of the workspace. Lines come numbered (`N<TAB>line`). `offset` is the first line (1-based), `limit` the number of lines (default 2000).",
    inputSchema: object({
      path: str("Path relative to the workspace root."),
      offset: int("First line to read, 1-based."),
      limit: int("Number of lines to read.")
    }, ["path"])
  },
  {
    name: "write_file",
    description: "Create or overwrite a file of the workspace with `content` (parent directories are created).",
    inputSchema: object({
      path: str("Path relative to the workspace root."),
      content: str("The whole new content of the file.")
    }, ["path", "content"])
  },
  {
    name: "edit_file",
    description:
      "Replace the exact text `oldString` with `newString` in a file. Fails when `oldString` is absent, or occurs more than once unless `replaceAll` is true.",
    inputSchema: object({
      path: str("Path relative to the workspace root."),
      oldString: str("Exact text to replace, whitespace included."),
      newString: str("Replacement text."),
      replaceAll: { type: "boolean", description: "Replace every occurrence (default false)." }
    }, ["path", "oldString", "newString"])
  },
  {
    name: "glob",
    description:
      "List the files and directories (with a trailing /) matching a bash glob pattern, `**` for any depth, e.g. `src/**/*.ts`. Hidden names match only when the pattern names them.",
    inputSchema: object({
      pattern: str("Glob pattern."),
      path: str("Directory to search from, relative to the workspace root (default the root).")
    }, ["pattern"])
  },
  {
    name: "grep",
    description:
      "Search file contents with an extended regular expression (grep -E). Binary files and .git are skipped. Returns `path:line:text` lines.",
    inputSchema: object({
      pattern: str("Extended regular expression."),
      path: str("File or directory to search, relative to the workspace root (default the root)."),
      glob: str("Only files whose name matches this glob, e.g. `*.ts`.")
    }, ["pattern"])
  }
]

export const bashSpec: ToolSpec = {
  name: "bash",
  description:
    "Run a command with bash in the workspace's sandbox (the workspace is the current directory and HOME; network, when the workspace has one, only through the HTTP(S)_PROXY set in the environment). Returns exitCode, stdout and stderr; a non-zero exit code is not an error.",
  inputSchema: object({
    command: str("The command line."),
    timeoutMs: int("Wall time limit in milliseconds."),
    cwd: str("Working directory relative to the workspace root.")
  }, ["command"])
}

const Optional = <S extends Schema.Top>(schema: S) => Schema.optional(Schema.UndefinedOr(schema))
const inputs = {
  read_file: Schema.Struct({ path: Schema.String, offset: Optional(Schema.Number), limit: Optional(Schema.Number) }),
  write_file: Schema.Struct({ path: Schema.String, content: Schema.String }),
  edit_file: Schema.Struct({
    path: Schema.String,
    oldString: Schema.String,
    newString: Schema.String,
    replaceAll: Optional(Schema.Boolean)
  }),
  glob: Schema.Struct({ pattern: Schema.String, path: Optional(Schema.String) }),
  grep: Schema.Struct({ pattern: Schema.String, path: Optional(Schema.String), glob: Optional(Schema.String) }),
  bash: Schema.Struct({ command: Schema.String, timeoutMs: Optional(Schema.Number), cwd: Optional(Schema.String) })
}

const decode = <S extends Schema.Codec<unknown, unknown>>(name: string, schema: S, input: unknown) =>
  Schema.decodeUnknownEffect(schema)(input).pipe(
    Effect.mapError((issue) => Files.FileToolError.of(`invalid input for ${name}: ${issue.message}`))
  )

const numbered = (content: string, start: number) =>
  content.split("\n").slice(0, content.endsWith("\n") ? -1 : undefined).map((line, i) => `${start + i}\t${line}`).join(
    "\n"
  )

export const make = (options: WorkspaceToolsOptions): ToolFamily => {
  const { sandbox, workspace } = options
  const mask = (text: string, truncated = false) => maskSecrets(text, options.secrets, { truncated })
  const ok = (output: unknown, text: string): ToolOutcome => ({
    output: maskDeep(output, mask),
    text: mask(text),
    isError: false
  })

  const bash = (input: unknown) =>
    Effect.gen(function*() {
      const { command, timeoutMs, cwd } = yield* decode("bash", inputs.bash, input)
      const at = WorkspacePath.resolve(cwd ?? ".")
      if ("error" in at) return yield* Files.FileToolError.of(`cwd: ${at.error}`)
      const maxMs = workspace.limits.maxTimeoutMs
      if (timeoutMs !== undefined && !(timeoutMs >= 1 && timeoutMs <= maxMs)) {
        return yield* Files.FileToolError.of(`timeoutMs must be between 1 and ${maxMs} in this workspace`)
      }
      const result = yield* sandbox.exec(workspace, { command, cwd: at.relative, env: options.env, timeoutMs })
      const output = {
        exitCode: result.exitCode,
        stdout: mask(result.stdout, result.truncated),
        stderr: mask(result.stderr, result.truncated),
        ...(result.truncated ? { truncated: true } : {})
      }
      if (result.limit !== undefined) {
        const failed = { error: result.limit.message, limit: result.limit.kind, ...output }
        return {
          output: failed,
          text: `Error: ${result.limit.message}\n${JSON.stringify(output)}`,
          isError: true
        } satisfies ToolOutcome
      }
      return { output, text: JSON.stringify(output), isError: false } satisfies ToolOutcome
    })

  const run: Record<
    string,
    (input: unknown) => Effect.Effect<ToolOutcome, Files.FileToolError | WorkspaceUnavailable>
  > = {
    read_file: (input) =>
      Effect.flatMap(decode("read_file", inputs.read_file, input), (i) => Files.readFile(sandbox, workspace, i)).pipe(
        Effect.map((r) => {
          const more = r.truncated
            ? `\n(output cut at the size cap after line ${r.endLine}; read on with offset ${r.endLine + 1})`
            : r.endLine < r.totalLines
            ? `\n(lines ${r.startLine}-${r.endLine} of ${r.totalLines}; read on with offset ${r.endLine + 1})`
            : ""
          // Masked before the lines are numbered (a numbered secret would no longer match), and as
          // cut output when the read stopped at the cap.
          const content = mask(r.content, r.truncated)
          return ok({ ...r, content }, numbered(content, r.startLine) + more)
        })
      ),
    write_file: (input) =>
      Effect.flatMap(decode("write_file", inputs.write_file, input), (i) => Files.writeFile(sandbox, workspace, i))
        .pipe(
          Effect.map((r) => ok(r, `Wrote ${r.bytes} bytes to ${r.path}.`))
        ),
    edit_file: (input) =>
      Effect.flatMap(decode("edit_file", inputs.edit_file, input), (i) => Files.editFile(sandbox, workspace, i)).pipe(
        Effect.map((r) =>
          ok(r, `Replaced ${r.replacements} occurrence${r.replacements === 1 ? "" : "s"} in ${r.path}.`)
        )
      ),
    glob: (input) =>
      Effect.flatMap(decode("glob", inputs.glob, input), (i) => Files.glob(sandbox, workspace, i)).pipe(
        Effect.map((r) =>
          ok(
            r,
            (r.matches.length === 0 ? "No match." : r.matches.join("\n")) +
              (r.truncated ? "\n(more matches not shown; narrow the pattern)" : "")
          )
        )
      ),
    grep: (input) =>
      Effect.flatMap(decode("grep", inputs.grep, input), (i) => Files.grep(sandbox, workspace, i)).pipe(
        Effect.map((r) =>
          ok(
            r,
            (r.matches.length === 0 ? "No match." : r.matches.map((m) => `${m.path}:${m.line}:${m.text}`).join("\n")) +
              (r.truncated ? "\n(more matches not shown; narrow the search)" : "")
          )
        )
      ),
    ...(options.shell ? { bash } : {})
  }

  const specs = [...fileToolSpecs, ...(options.shell ? [bashSpec] : [])]

  return {
    specs,
    call: (name, input) => {
      const tool = Object.hasOwn(run, name) ? run[name] : undefined
      if (tool === undefined) return undefined
      return tool(input).pipe(
        Effect.catchTags({
          FileToolError: (e) => Effect.succeed(errorOutcome(`Error: ${mask(e.message)}`, { error: mask(e.message) })),
          WorkspaceUnavailable: (e) =>
            Effect.succeed(
              errorOutcome(`workspace_unavailable: ${e.message}`, {
                error: { code: "workspace_unavailable", message: e.message }
              })
            )
        })
      )
    },
    policyOf: () => undefined,
    untrusted: false,
    requiredSkillsOf: () => [],
    deferred: new Set(),
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
  }
}

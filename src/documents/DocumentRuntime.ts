/**
 * Runs a converter inside the thread's sandbox (docs/design/documents.md):
 * the document worker (`worker/main.mjs`, the `docx`, `exceljs`, `pdf-lib`,
 * `mammoth` libraries, LibreOffice and poppler) or a media command (ffmpeg,
 * ImageMagick), as the workspace user, under the resource class's limits
 * and its longest wall time. The worker's code and the service's
 * node_modules are bound read-only at /opt/svc inside. A converter that
 * fails, crashes or hits a limit fails the tool call (`document_error`,
 * `media_error`, `workspace_limit`), never the service.
 */
import { Data, Effect, Option, Schema } from "effect"
import { createRequire } from "node:module"
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"
import type { ReadOnlyBinding } from "../workspace/BwrapCommand.ts"
import type { ExecRequest, Sandbox, Workspace } from "../workspace/Sandbox.ts"
import type { WorkspaceUnavailable } from "../workspace/WorkspaceUnavailable.ts"

/** A converter's failure, as the model reads it: `document_error`, `media_error` or `workspace_limit`. */
export class ConverterFailed extends Data.TaggedError("ConverterFailed")<{
  readonly code: string
  readonly message: string
  readonly details?: Readonly<Record<string, unknown>> | undefined
}> {}

export interface Converting {
  readonly sandbox: Sandbox["Service"]
  readonly workspace: Workspace
}

let bindings: ReadonlyArray<ReadOnlyBinding> | undefined
/** The worker's code and the node_modules it imports from, as bound inside. */
export const workerBindings = (): ReadonlyArray<ReadOnlyBinding> =>
  bindings ??= [
    { host: fileURLToPath(new URL("./worker", import.meta.url)), inside: "/opt/svc/worker" },
    {
      host: dirname(dirname(createRequire(import.meta.url).resolve("pdf-lib/package.json"))),
      inside: "/opt/svc/node_modules"
    }
  ]

const MiB = 1024 * 1024

/** Runs `command` in the sandbox with the class's longest wall time; a limit or a start failure fails it. */
export const run = (
  { sandbox, workspace }: Converting,
  code: string,
  request: Omit<ExecRequest, "timeoutMs">
): Effect.Effect<
  { readonly exitCode: number; readonly stdout: string; readonly stderr: string },
  ConverterFailed | WorkspaceUnavailable
> =>
  Effect.flatMap(
    sandbox.exec(workspace, {
      ...request,
      // Caches and settings of fontconfig and LibreOffice under .svc, not at the workspace's top.
      env: { XDG_CACHE_HOME: "/workspace/.svc/cache", XDG_CONFIG_HOME: "/workspace/.svc/config", ...request.env },
      timeoutMs: workspace.limits.maxTimeoutMs
    }),
    (result) =>
      result.limit !== undefined
        ? Effect.fail(
          new ConverterFailed({
            code: "workspace_limit",
            message: result.limit.message,
            details: { limit: result.limit.kind }
          })
        )
        : result.truncated
        ? Effect.fail(
          new ConverterFailed({ code, message: "the converter's answer was larger than this tool returns" })
        )
        : Effect.succeed(result)
  )

const tail = (text: string) => text.trim().split("\n").filter((l) => !l.includes("javaldx")).slice(-5).join("\n")

/**
 * One request to the document worker; its JSON answer. The worker's heap is capped below the
 * class's memory (the address-space limit still backs it), so a document that would take more
 * fails the call.
 */
export const worker = (
  ctx: Converting,
  request: Readonly<Record<string, unknown>>
): Effect.Effect<Record<string, unknown>, ConverterFailed | WorkspaceUnavailable> =>
  Effect.gen(function*() {
    const heapMiB = Math.max(64, Math.floor(ctx.workspace.limits.memoryBytes / MiB / 4))
    const result = yield* run(ctx, "document_error", {
      // A smaller young generation and no helper threads: V8 reserves less address space, so Node starts under a small class's limit.
      command:
        `exec node --max-old-space-size=${heapMiB} --max-semi-space-size=2 --single-threaded /opt/svc/worker/main.mjs`,
      stdin: JSON.stringify(request),
      outputBytes: 4 * MiB,
      readOnly: workerBindings()
    })
    const answer = parse(result.stdout)
    if (result.exitCode === 3 && typeof answer?.["error"] === "string") {
      return yield* new ConverterFailed({ code: "document_error", message: answer["error"] })
    }
    if (result.exitCode !== 0 || answer === undefined) {
      const why = /heap out of memory|Allocation failed|Cannot allocate memory/i.test(result.stderr)
        ? "the document needs more memory than this workspace allows: " + tail(result.stderr)
        : tail(result.stderr) || `exit code ${result.exitCode}`
      return yield* new ConverterFailed({
        code: "document_error",
        message: `the document could not be processed: ${why}`
      })
    }
    return answer
  })

/** The worker's answer: one JSON object (each tool reads its own fields of it); anything else is none. */
const parse = (text: string): Record<string, unknown> | undefined => Option.getOrUndefined(decodeAnswer(text))
const decodeAnswer = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown)))

/** A string for bash, single-quoted. */
export const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

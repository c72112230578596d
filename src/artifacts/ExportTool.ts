/**
 * `workspace_export_artifact({ path })` (spec 2.1.2, issue 12): a file of the
 * managed workspace stored as a run-scoped `export` artifact and, when the
 * agent's `artifacts.exports.resultHandlerId` takes workspace exports,
 * delivered to that handler (spec 6.1: inline base64 up to 1 MiB, above that
 * a `url` transfer handle served by this service with its `svcArtifactId`).
 * The model reads `export` (the handler's durable artifactId / url) and
 * `artifact.ref` / `artifact.block` from the handler's answer, or the native
 * `{ kind: 'svc', id }` handle without a handler; with
 * `stream.urls: 'include-svc-signed'` also a temporary signed URL.
 * A delivery that fails is a tool error the model reads; the handler's
 * answer is journaled (ResultDispatch), so a replayed step sends nothing again.
 */
import { Effect, Schema } from "effect"
import * as ToolDef from "../tools/ToolDef.ts"
import type { CallRef, FileAccess, ToolFamily } from "../tools/ToolFamily.ts"
import { NonEmpty } from "../tools/ToolInput.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import { deliver, type DeliveryOptions } from "./Deliverable.ts"
import { mediaTypeOf } from "./MediaTypes.ts"

export const exportToolName = "workspace_export_artifact"

export interface ExportOptions extends DeliveryOptions {
  readonly files: FileAccess
  readonly maxBytes: number
}

/** An export runs with the run's files, store and handler, for one call. */
interface ExportCall extends ExportOptions {
  readonly call: CallRef
}

const exportTool = ToolDef.make({
  name: exportToolName,
  description:
    "Export a file of the workspace as an artifact (a deliverable for the user): it is stored and, when the agent has an " +
    "artifact handler, delivered there. Answers how to refer to it (`export.url`, `artifact.ref`, `artifact.block`).",
  input: Schema.Struct({ path: NonEmpty("Path of the file, relative to the workspace root.") }),
  handler: ({ path }, { call, files, maxBytes, ...delivery }: ExportCall) =>
    Effect.gen(function*() {
      const file = yield* files.read(path, maxBytes)
      const filename = file.path.split("/").at(-1) ?? file.path
      const mediaType = mediaTypeOf(filename, file.bytes)
      const { artifact, bytes, sha256, ...rest } = yield* deliver(delivery, {
        toolName: exportToolName,
        call,
        index: 0,
        filename,
        mediaType,
        bytes: file.bytes
      })
      return {
        path: file.path,
        filename,
        mediaType,
        bytes,
        sha256,
        ...(rest.export === undefined ? {} : { export: rest.export }),
        artifact
      }
    })
})

/** The family of the one tool; none when there is neither a store nor a handler to export to. */
export const make = (options: ExportOptions): ToolFamily | undefined => {
  if (options.artifacts === undefined && options.handlerId === undefined) return undefined
  return ToolDef.family([exportTool], {
    context: (call) => ({ ...options, call }),
    recover: (e) =>
      e._tag === "SpillFailed"
        ? ToolOutcome.failure("workspace_error", e.message)
        : e._tag === "DeliveryFailed"
        ? ToolOutcome.failure(
          e.failed.code,
          `the export could not be delivered to the agent's artifact handler: ${e.failed.message}`
        )
        : ToolOutcome.failure(e.code, `the export could not be stored: ${e.message}`)
  })
}

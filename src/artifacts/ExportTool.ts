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
import type { ArtifactRecord } from "../../domain/Artifact.ts"
import type { ResultHandlerId, RunId, ThreadId } from "../../domain/Ids.ts"
import type { ResultDispatch } from "../resultHandlers/ResultDispatch.ts"
import * as ToolDef from "../tools/ToolDef.ts"
import type { CallRef, FileAccess, ToolFamily } from "../tools/ToolFamily.ts"
import { NonEmpty } from "../tools/ToolInput.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import type { ArtifactOwner, Artifacts } from "./Artifacts.ts"
import { mediaTypeOf } from "./MediaTypes.ts"
import { sha256Hex } from "./StoredBytes.ts"

export const exportToolName = "workspace_export_artifact"
/** Up to this size an export goes to the handler inline (base64); larger ones as a signed URL. */
export const inlineExportBytes = 1024 * 1024

export interface ExportOptions {
  readonly files: FileAccess
  /** Absent when SVC_ARTIFACT_STORE=none: exports then go to the handler inline only. */
  readonly artifacts: Artifacts["Service"] | undefined
  readonly dispatch: ResultDispatch["Service"]
  readonly run: {
    readonly runId: RunId
    readonly threadId: ThreadId
    readonly agentId: string
    readonly owner: ArtifactOwner
  }
  readonly handlerId: ResultHandlerId | undefined
  readonly signedUrls: boolean
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
  handler: ({ path }, { artifacts, call, dispatch, files, handlerId, run, ...options }: ExportCall) =>
    Effect.gen(function*() {
      const file = yield* files.read(path, options.maxBytes)
      const filename = file.path.split("/").at(-1) ?? file.path
      const mediaType = mediaTypeOf(filename, file.bytes)
      const described = {
        path: file.path,
        filename,
        mediaType,
        bytes: file.bytes.byteLength,
        sha256: sha256Hex(file.bytes)
      }
      const stored: ArtifactRecord | undefined = artifacts === undefined
        ? undefined
        : yield* artifacts.put({
          owner: run.owner,
          runId: run.runId,
          threadId: run.threadId,
          kind: "export",
          filename,
          mediaType,
          data: file.bytes
        })
      const signed = stored !== undefined && artifacts !== undefined && options.signedUrls
        ? { url: (yield* artifacts.signedLink(stored.id)).url }
        : {}
      const svcRef = stored === undefined ? undefined : { kind: "svc", id: stored.id }
      if (handlerId === undefined) return { ...described, artifact: { ref: svcRef, ...signed } }
      const content = stored !== undefined && artifacts !== undefined && described.bytes > inlineExportBytes
        ? {
          kind: "url" as const,
          url: yield* artifacts.signedUrl(stored.id),
          mimeType: mediaType,
          svcArtifactId: stored.id
        }
        : { kind: "base64" as const, base64: Buffer.from(file.bytes).toString("base64"), mimeType: mediaType }
      const { answer } = yield* dispatch.dispatch({
        handlerId,
        owner: run.owner,
        runId: run.runId,
        threadId: run.threadId,
        agentId: run.agentId,
        toolName: exportToolName,
        toolCallId: call.id,
        stepNumber: call.step + 1,
        mediaType,
        bytes: described.bytes,
        sha256: described.sha256,
        content,
        purpose: "export",
        requestKey: `${run.runId}:${call.id}:export`
      })
      const durable = {
        ...(answer.artifactId === undefined ? {} : { artifactId: answer.artifactId }),
        ...(answer.url === undefined ? {} : { url: answer.url })
      }
      // The handler's pasteable reference, else the id-only transfer handle.
      const ref = answer.ref ?? svcRef
      const block = answer.ref?.block === undefined ? {} : { block: answer.ref.block }
      return {
        ...described,
        export: durable,
        artifact: { ...(ref === undefined ? {} : { ref }), ...block, ...signed }
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
        : e._tag === "DispatchFailed"
        ? ToolOutcome.failure(
          e.code,
          `the export could not be delivered to the agent's artifact handler: ${e.message}`
        )
        : ToolOutcome.failure(e.code, `the export could not be stored: ${e.message}`)
  })
}

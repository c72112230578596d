/**
 * A deliverable's one way out (spec 2.1.2, 4.5, 6.1): bytes a tool produced
 * for the user (an explicit workspace export, a generated image or sound) are
 * stored as a run-scoped `export` artifact and, when the run has an export
 * handler for them, dispatched to it (inline base64 up to `inlineExportBytes`,
 * above that a `url` transfer handle served by this service with its
 * `svcArtifactId`). What the model and the stream read of it: the handler's
 * durable `artifactId` / `url` (`export`), its `ref` / `block` projected onto
 * `artifact.ref` / `artifact.block`, or without a handler the native
 * `{ kind: 'svc', id }` handle; with `stream.urls: 'include-svc-signed'` also
 * a temporary signed URL (`artifact.url`).
 *
 * The dispatch is journaled by ResultDispatch under `<run>:<call>:export`
 * (`:export:<n>` for a call's later deliverables), so a replayed step sends
 * nothing again.
 */
import { Data, Effect } from "effect"
import type { ArtifactRecord } from "../../domain/Artifact.ts"
import type { ResultHandlerId, RunId, ThreadId } from "../../domain/Ids.ts"
import type { DispatchFailed, ResultDispatch } from "../resultHandlers/ResultDispatch.ts"
import type { CallRef } from "../tools/ToolFamily.ts"
import type { ArtifactOwner, Artifacts } from "./Artifacts.ts"
import { sha256Hex } from "./StoredBytes.ts"

/** Up to this size a deliverable goes to the handler inline (base64); larger ones as a signed URL. */
export const inlineExportBytes = 1024 * 1024

export interface DeliveryOptions {
  /** Absent when SVC_ARTIFACT_STORE=none: deliverables then go to the handler inline only. */
  readonly artifacts: Artifacts["Service"] | undefined
  readonly dispatch: ResultDispatch["Service"]
  readonly run: {
    readonly runId: RunId
    readonly threadId: ThreadId
    readonly agentId: string
    readonly owner: ArtifactOwner
  }
  /** The run's export handler for this kind of deliverable; none: not dispatched. */
  readonly handlerId: ResultHandlerId | undefined
  readonly signedUrls: boolean
}

export interface Deliverable {
  readonly toolName: string
  readonly call: CallRef
  /** 0 for a call's first deliverable; a call that makes several numbers them. */
  readonly index: number
  readonly filename: string
  readonly mediaType: string
  readonly bytes: Uint8Array
}

/** How the model and the stream refer to a deliverable. */
export interface Delivered {
  /** The stored artifact (absent with SVC_ARTIFACT_STORE=none): what `GET /v1/artifacts/:id` and view_media take. */
  readonly svcArtifactId?: string
  readonly mediaType: string
  readonly bytes: number
  readonly sha256: string
  /** The handler's durable locators (present when a handler took it). */
  readonly export?: { readonly artifactId?: string; readonly url?: string }
  readonly artifact: {
    readonly ref?: { readonly kind?: string; readonly id?: string; readonly url?: string; readonly block?: string }
    readonly block?: string
    readonly url?: string
  }
}

/** Stores and dispatches one deliverable; a failed dispatch fails with DispatchFailed (the bytes stay stored). */
export const deliver = (
  { artifacts, dispatch, handlerId, run, signedUrls }: DeliveryOptions,
  d: Deliverable
) =>
  Effect.gen(function*() {
    const described = { mediaType: d.mediaType, bytes: d.bytes.byteLength, sha256: sha256Hex(d.bytes) }
    const stored: ArtifactRecord | undefined = artifacts === undefined
      ? undefined
      : yield* artifacts.put({
        owner: run.owner,
        runId: run.runId,
        threadId: run.threadId,
        kind: "export",
        filename: d.filename,
        mediaType: d.mediaType,
        data: d.bytes
      })
    const signed = stored !== undefined && artifacts !== undefined && signedUrls
      ? { url: (yield* artifacts.signedLink(stored.id)).url }
      : {}
    const svcRef = stored === undefined ? undefined : { kind: "svc", id: stored.id }
    const storedId = stored === undefined ? {} : { svcArtifactId: stored.id }
    const native: Delivered = {
      ...storedId,
      ...described,
      artifact: { ...(svcRef === undefined ? {} : { ref: svcRef }), ...signed }
    }
    if (handlerId === undefined) return native
    const content = stored !== undefined && artifacts !== undefined && described.bytes > inlineExportBytes
      ? {
        kind: "url" as const,
        url: yield* artifacts.signedUrl(stored.id),
        mimeType: d.mediaType,
        svcArtifactId: stored.id
      }
      : { kind: "base64" as const, base64: Buffer.from(d.bytes).toString("base64"), mimeType: d.mediaType }
    const { answer } = yield* dispatch.dispatch({
      handlerId,
      owner: run.owner,
      runId: run.runId,
      threadId: run.threadId,
      agentId: run.agentId,
      toolName: d.toolName,
      toolCallId: d.call.id,
      stepNumber: d.call.step + 1,
      mediaType: d.mediaType,
      bytes: described.bytes,
      sha256: described.sha256,
      content,
      purpose: "export",
      requestKey: `${run.runId}:${d.call.id}:export${d.index === 0 ? "" : `:${d.index}`}`
    }).pipe(Effect.mapError((failed) => new DeliveryFailed({ failed, native })))
    const durable = {
      ...(answer.artifactId === undefined ? {} : { artifactId: answer.artifactId }),
      ...(answer.url === undefined ? {} : { url: answer.url })
    }
    // The handler's pasteable reference, else the id-only transfer handle.
    const ref = answer.ref ?? svcRef
    const block = answer.ref?.block === undefined ? {} : { block: answer.ref.block }
    return {
      ...storedId,
      ...described,
      export: durable,
      artifact: { ...(ref === undefined ? {} : { ref }), ...block, ...signed }
    } satisfies Delivered
  })

/** A dispatch that failed, with what the deliverable is without it (stored, the native handle). */
export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{
  readonly failed: DispatchFailed
  readonly native: Delivered
}> {}

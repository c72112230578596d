/**
 * What a media tool call runs with (`MediaCall`), and how each generated file
 * becomes a deliverable: stored and dispatched through the one export path
 * (src/artifacts/Deliverable.ts, to `exports.resultHandlerId` unless
 * `generatedDeliverables` is false), placed in the managed workspace under
 * `media/` when the run has one (its path returned), and charged to the run.
 * A dispatch that fails is shown on that file (`exportFailed`, with the native
 * handle), not as a failure of the call: the media was made and paid for.
 */
import { Effect } from "effect"
import type { MediaKind, PlannedMedia } from "../../domain/Media.ts"
import { deliver, type Delivered, type DeliveryOptions } from "../artifacts/Deliverable.ts"
import type { CallRef, FileAccess } from "../tools/ToolFamily.ts"
import type { SourceReader } from "./GenerationSource.ts"
import type { MediaConfig, MediaRoute } from "./MediaConfig.ts"
import { GenerationFailed } from "./MediaHttp.ts"
import { costOf, type Meter } from "./MediaMeter.ts"

export interface MediaCall {
  readonly call: CallRef
  readonly planned: ReadonlyArray<PlannedMedia>
  readonly endpoints: Pick<MediaConfig, "openai" | "elevenlabs">
  readonly delivery: DeliveryOptions
  /** The managed workspace's files; none without one. */
  readonly files: FileAccess | undefined
  readonly sources: SourceReader
  readonly meter: Meter
  /** A `data-svc-progress` activity of the run (with streamProgress; nothing otherwise). */
  readonly progress: (text: string) => Effect.Effect<void>
}

/** The run's route of `kind` (the family offers a kind's tools only when the plan has it). */
export const routeOf = (ctx: MediaCall, kind: MediaKind) => {
  const planned = ctx.planned.find((p) => p.kind === kind)
  if (planned === undefined) {
    return Effect.fail(new GenerationFailed({ code: "media_provider_error", message: `no ${kind} route for this run` }))
  }
  const colon = planned.route.indexOf(":")
  const route: MediaRoute = {
    kind,
    provider: planned.route.slice(0, colon) === "elevenlabs" ? "elevenlabs" : "openai",
    model: planned.route.slice(colon + 1),
    route: planned.route,
    centsPerUnit: planned.centsPerUnit,
    strict: false
  }
  return Effect.succeed({ planned, route })
}

/** Checks the cost of `quantity` units against the run's limits before anything is sent. */
export const ensureAffordable = (ctx: MediaCall, planned: PlannedMedia, quantity: number, what: string) =>
  ctx.meter.ensure(costOf(planned, quantity), what)

/** Charges `quantity` units of the call's generation; answers its cost. */
export const charge = (ctx: MediaCall, planned: PlannedMedia, toolName: string, quantity: number) =>
  Effect.as(
    ctx.meter.charge({
      type: "media_generation",
      toolName,
      toolCallId: ctx.call.id,
      kind: planned.kind,
      route: planned.route,
      unit: planned.unit,
      quantity,
      costCents: costOf(planned, quantity)
    }),
    costOf(planned, quantity)
  )

const extensions: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "image/gif": "gif",
  "audio/mpeg": "mp3",
  "audio/ogg": "ogg",
  "audio/aac": "aac",
  "audio/flac": "flac",
  "audio/wav": "wav",
  "audio/pcm": "pcm",
  "video/mp4": "mp4",
  "video/webm": "webm"
}

/** One generated file as the model and the stream see it. */
export type Output = Delivered & {
  readonly filename: string
  readonly path?: string
  readonly exportFailed?: { readonly code: string; readonly message: string }
  readonly workspaceError?: string
}

/** Stores, dispatches and places one generated file (`index` numbers a call's files). */
export const output = (
  ctx: MediaCall,
  toolName: string,
  index: number,
  file: { readonly bytes: Uint8Array; readonly mediaType: string }
) =>
  Effect.gen(function*() {
    const stem = `${toolName.replace(/^generate_|^edit_/, "")}-${ctx.call.id.slice(-8)}`
    const filename = `${stem}${index === 0 ? "" : `-${index + 1}`}.${extensions[file.mediaType] ?? "bin"}`
    const delivered = yield* deliver(ctx.delivery, {
      toolName,
      call: ctx.call,
      index,
      filename,
      mediaType: file.mediaType,
      bytes: file.bytes
    }).pipe(
      Effect.catchTag("DeliveryFailed", ({ failed, native }) =>
        Effect.succeed<Output>({
          filename,
          ...native,
          exportFailed: {
            code: failed.code,
            message: `the file could not be delivered to the agent's artifact handler: ${failed.message}`
          }
        }))
    )
    const placed = ctx.files === undefined
      ? {}
      : yield* ctx.files.write(`media/${filename}`, file.bytes).pipe(
        Effect.map((path) => ({ path })),
        Effect.catchTag("SpillFailed", (e) => Effect.succeed({ workspaceError: e.message }))
      )
    const result: Output = { filename, ...placed, ...delivered }
    return result
  })

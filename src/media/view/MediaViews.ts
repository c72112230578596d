/**
 * What view_media makes of a source for the model: the images it is shown
 * (an image as it is, or re-encoded smaller past `imageMaxBytes`; a PDF's
 * first pages; a video's sampled frames) or an audio's transcript, with a
 * line describing them. In `auto` each image is stored as a run artifact
 * (kind `media`) so later steps can send it again by id; `analysis` keeps the
 * rendered images for its one call only (the source itself is stored either way).
 */
import { Effect } from "effect"
import type { AttachmentRef } from "../../../domain/Conversation.ts"
import type { RunId, ThreadId } from "../../../domain/Ids.ts"
import type { ArtifactOwner, Artifacts } from "../../artifacts/Artifacts.ts"
import { sha256Hex } from "../../artifacts/StoredBytes.ts"
import { MediaFailed } from "./MediaProcess.ts"
import { audioSeconds, pdfPages, smallerImage, videoFrames } from "./MediaRender.ts"
import type { Resolved } from "./MediaSource.ts"
import type { Transcriber } from "./Transcription.ts"
import { type FidelityProfile, viewLimits } from "./ViewLimits.ts"

export type MediaKind = "image" | "pdf" | "video" | "audio"

const imageTypes = new Set(["image/png", "image/jpeg", "image/webp", "image/gif"])

/** The kind of media a type is, or undefined for what view_media does not show. */
export const kindOf = (mediaType: string): MediaKind | undefined =>
  imageTypes.has(mediaType)
    ? "image"
    : mediaType === "application/pdf"
    ? "pdf"
    : mediaType.startsWith("video/")
    ? "video"
    : mediaType.startsWith("audio/")
    ? "audio"
    : undefined

export interface Shown {
  readonly ref: AttachmentRef
  readonly bytes: Uint8Array
  /** What the image is (`page 2`, `frame at 4.5 s`). */
  readonly label: string
}

export interface View {
  /** One line: what the model is shown. */
  readonly describes: string
  readonly images: ReadonlyArray<Shown>
  readonly transcript?: string
}

export interface Store {
  readonly artifacts: Artifacts["Service"]
  readonly owner: ArtifactOwner
  readonly runId: RunId
  readonly threadId: ThreadId
}

/** Stores `bytes` as a run artifact of kind `media`; its reference as an image part. */
export const store = (s: Store, filename: string, mediaType: string, bytes: Uint8Array) =>
  s.artifacts.put({
    owner: s.owner,
    runId: s.runId,
    threadId: s.threadId,
    kind: "media",
    filename,
    mediaType,
    data: bytes
  })
    .pipe(
      Effect.mapError((e) =>
        new MediaFailed({ code: "media_not_stored", message: `The media could not be stored: ${e.message}` })
      ),
      Effect.map((r): AttachmentRef => ({
        artifactId: r.id,
        filename: r.filename,
        mediaType: r.mediaType,
        bytes: r.bytes,
        sha256: r.sha256,
        as: "image"
      }))
    )

/** An image kept for one call only (analysis): its reference names the source artifact and the part. */
const transient = (sourceId: string, part: string, bytes: Uint8Array): AttachmentRef => ({
  artifactId: `${sourceId}#${part}`,
  filename: `${part}.jpg`,
  mediaType: "image/jpeg",
  bytes: bytes.byteLength,
  sha256: sha256Hex(bytes),
  as: "image"
})

const stem = (filename: string) => filename.replace(/\.[^.]*$/, "") || "media"

export interface ViewOptions {
  readonly profile: FidelityProfile
  /** Store each rendered image (auto), or keep it for the analysis call only. */
  readonly keep: boolean
  readonly store: Store
  readonly transcriber: Transcriber | string
}

/** `source` (stored as `original`) as the model is to see it. */
export const viewOf = (
  kind: MediaKind,
  source: Resolved,
  original: AttachmentRef,
  options: ViewOptions
): Effect.Effect<View, MediaFailed> => {
  const { keep, profile } = options
  const rendered = (part: string, bytes: Uint8Array, label: string) =>
    keep
      ? Effect.map(
        store(options.store, `${stem(source.filename)}-${part}.jpg`, "image/jpeg", bytes),
        (ref): Shown => ({ ref, bytes, label })
      )
      : Effect.succeed<Shown>({ ref: transient(original.artifactId, part, bytes), bytes, label })
  switch (kind) {
    case "image":
      return source.bytes.byteLength <= viewLimits.imageMaxBytes
        ? Effect.succeed({
          describes: `the image ${source.filename} (${source.mediaType}, ${source.bytes.byteLength} bytes)`,
          images: [{ ref: original, bytes: source.bytes, label: "the image" }]
        })
        : Effect.gen(function*() {
          const smaller = yield* smallerImage(source.bytes, profile)
          return {
            describes:
              `the image ${source.filename} (${source.bytes.byteLength} bytes, re-encoded as JPEG at most ${profile.imageLongEdge} px on its long edge)`,
            images: [yield* rendered("small", smaller, "the image")]
          }
        })
    case "pdf":
      return Effect.gen(function*() {
        const pdf = yield* pdfPages(source.bytes, profile)
        const images = yield* Effect.forEach(pdf.pages, (bytes, i) => rendered(`page-${i + 1}`, bytes, `page ${i + 1}`))
        return {
          describes: `the PDF ${source.filename}: pages 1-${images.length} of ${pdf.totalPages} at ${pdf.dpi} DPI`,
          images
        }
      })
    case "video":
      return Effect.gen(function*() {
        const video = yield* videoFrames(source.bytes, profile)
        const images = yield* Effect.forEach(
          video.frames,
          (frame, i) => rendered(`frame-${i + 1}`, frame.bytes, `frame at ${frame.atSeconds} s`)
        )
        return {
          describes: `the video ${source.filename} (${
            video.durationSeconds.toFixed(1)
          } s): ${images.length} frames at ${video.frames.map((f) => `${f.atSeconds} s`).join(", ")}`,
          images
        }
      })
    case "audio":
      return Effect.gen(function*() {
        const transcriber = options.transcriber
        if (typeof transcriber === "string") {
          return yield* new MediaFailed({ code: "transcription_unavailable", message: transcriber })
        }
        const seconds = yield* audioSeconds(source.bytes)
        const transcript = yield* transcriber.transcribe(source)
        return {
          describes: `the audio ${source.filename} (${seconds.toFixed(1)} s), transcribed`,
          images: [],
          transcript
        }
      })
  }
}

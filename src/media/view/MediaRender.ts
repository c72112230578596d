/**
 * What view_media renders for the model: a PDF's first pages as JPEG images
 * (pdftoppm at the fidelity's DPI), a video's frames sampled evenly over its
 * length (ffmpeg, each frame's long edge at most the fidelity's), an
 * oversized image re-encoded as a smaller JPEG (ffmpeg), and the length of a
 * video or audio (ffprobe). See ./ViewLimits.ts for the bounds.
 */
import { Effect } from "effect"
import { exec, MediaFailed, withWorkDir } from "./MediaProcess.ts"
import type { FidelityProfile } from "./ViewLimits.ts"
import { viewLimits } from "./ViewLimits.ts"

/** ffmpeg's scale filter keeping the aspect ratio, the long edge at most `edge` (never enlarged). */
const fit = (edge: number) => `scale='if(gte(iw,ih),min(${edge},iw),-2)':'if(gte(iw,ih),-2,min(${edge},ih))'`

export interface RenderedPdf {
  readonly pages: ReadonlyArray<Uint8Array>
  readonly totalPages: number
  readonly dpi: number
}

/** The first `viewLimits.pdfMaxPages` pages of a PDF as JPEG images. */
export const pdfPages = (bytes: Uint8Array, profile: FidelityProfile): Effect.Effect<RenderedPdf, MediaFailed> =>
  withWorkDir((dir) =>
    Effect.gen(function*() {
      const input = yield* dir.write("in.pdf", bytes)
      const info = yield* exec("pdfinfo", [input], "PDF")
      const totalPages = Number(/^Pages:\s+(\d+)/m.exec(info)?.[1] ?? "0")
      const last = Math.min(Math.max(totalPages, 1), viewLimits.pdfMaxPages)
      yield* exec("pdftoppm", [
        "-jpeg",
        "-jpegopt",
        "quality=85",
        "-r",
        String(profile.pdfDpi),
        "-f",
        "1",
        "-l",
        String(last),
        input,
        dir.path("page")
      ], "PDF")
      const pages = yield* dir.readAll("page")
      if (pages.length === 0) {
        return yield* new MediaFailed({ code: "media_unreadable", message: "The PDF has no page to show." })
      }
      return { pages, totalPages, dpi: profile.pdfDpi }
    })
  )

/** The length in seconds of a video or audio file at `path` (ffprobe); refused past `viewLimits.maxSeconds`. */
const durationAt = (path: string, what: string) =>
  Effect.gen(function*() {
    const raw = yield* exec(
      "ffprobe",
      ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
      what
    )
    const seconds = Number.parseFloat(raw.trim())
    if (!Number.isFinite(seconds) || seconds <= 0) {
      return yield* new MediaFailed({
        code: "media_unreadable",
        message: `The ${what} has no length ffprobe can read.`
      })
    }
    if (seconds > viewLimits.maxSeconds) {
      return yield* new MediaFailed({
        code: "media_too_large",
        message: `The ${what} is ${seconds.toFixed(1)} s long; view_media takes up to ${viewLimits.maxSeconds} s.`
      })
    }
    return seconds
  })

/** The length of an audio file, checked against the bound. */
export const audioSeconds = (bytes: Uint8Array): Effect.Effect<number, MediaFailed> =>
  withWorkDir((dir) => Effect.flatMap(dir.write("in", bytes), (input) => durationAt(input, "audio")))

export interface RenderedVideo {
  readonly frames: ReadonlyArray<{ readonly bytes: Uint8Array; readonly atSeconds: number }>
  readonly durationSeconds: number
}

/** `profile.videoFrames` frames sampled evenly over the video (from its start), as JPEG images. */
export const videoFrames = (bytes: Uint8Array, profile: FidelityProfile): Effect.Effect<RenderedVideo, MediaFailed> =>
  withWorkDir((dir) =>
    Effect.gen(function*() {
      const input = yield* dir.write("in", bytes)
      const durationSeconds = yield* durationAt(input, "video")
      const count = profile.videoFrames
      // One pass: the fps filter keeps the frame nearest each of `count` evenly spaced times from 0.
      const rate = count / durationSeconds
      yield* exec("ffmpeg", [
        "-v",
        "error",
        "-i",
        input,
        "-vf",
        `fps=${rate.toFixed(6)},${fit(profile.imageLongEdge)}`,
        "-frames:v",
        String(count),
        "-q:v",
        "3",
        "-y",
        dir.path("frame-%03d.jpg")
      ], "video")
      const frames = (yield* dir.readAll("frame-")).map((bytes, i) => ({
        bytes,
        atSeconds: Math.round((i * durationSeconds * 10) / count) / 10
      }))
      if (frames.length === 0) {
        return yield* new MediaFailed({ code: "media_unreadable", message: "ffmpeg found no frame in the video." })
      }
      return { frames, durationSeconds }
    })
  )

/** An image re-encoded as JPEG, its long edge at most `profile.imageLongEdge`. */
export const smallerImage = (bytes: Uint8Array, profile: FidelityProfile): Effect.Effect<Uint8Array, MediaFailed> =>
  withWorkDir((dir) =>
    Effect.gen(function*() {
      const input = yield* dir.write("in", bytes)
      yield* exec("ffmpeg", [
        "-v",
        "error",
        "-i",
        input,
        "-frames:v",
        "1",
        "-vf",
        fit(profile.imageLongEdge),
        "-q:v",
        "3",
        "-y",
        dir.path("out.jpg")
      ], "image")
      const [out] = yield* dir.readAll("out.jpg")
      return out
    })
  )

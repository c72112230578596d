/**
 * The bounds of view_media and what each `policies.mediaFidelity` level
 * renders (docs/guide/media-view.md, docs/reference/limits.md). `standard` is
 * the economy level; `spatial` keeps detail: PDF pages at twice the DPI, three
 * times the video frames, frames up to the largest edge Anthropic takes
 * without scaling down, and `detail: "high"` on OpenAI-compatible image parts
 * (src/model/AttachmentParts.ts).
 */

export const viewLimits = {
  /** The most bytes of a source read (a URL's body, a file, an artifact, a workspace file). */
  sourceMaxBytes: 25_000_000,
  /** An image larger than this is re-encoded (JPEG, its long edge at the level's `imageLongEdge`) before it is sent. */
  imageMaxBytes: 5_000_000,
  /** The first pages of a PDF rendered; the rest are named, not shown. */
  pdfMaxPages: 6,
  /** A longer video or audio is refused. */
  maxSeconds: 300,
  /** How long one ffmpeg / ffprobe / pdftoppm / pdfinfo process may take. */
  processTimeoutMs: 60_000,
  /** How long a transcription or an analysis call may take. */
  modelCallTimeoutMs: 120_000
} as const

export interface FidelityProfile {
  /** Resolution PDF pages are rendered at (pdftoppm -r). */
  readonly pdfDpi: number
  /** Frames sampled evenly over a video. */
  readonly videoFrames: number
  /** The long edge of a video frame, and of an oversized image once re-encoded, in pixels. */
  readonly imageLongEdge: number
}

export const fidelityProfiles: Readonly<Record<"standard" | "spatial", FidelityProfile>> = {
  standard: { pdfDpi: 96, videoFrames: 4, imageLongEdge: 768 },
  spatial: { pdfDpi: 192, videoFrames: 12, imageLongEdge: 1568 }
}

/**
 * The media tools of `workspace.mediaEditing` (spec 2.1.3; the names are
 * public contract): `media_probe` (ffprobe) and `media_edit` (ffmpeg, and
 * ImageMagick for still-image conversions), run inside the thread's sandbox
 * like every converter (DocumentRuntime), bounded by the class's longest
 * wall time. Outputs are ordinary workspace files.
 */
import { Effect, Schema } from "effect"
import { posix } from "node:path"
import * as ToolDef from "../tools/ToolDef.ts"
import { NonEmpty, NonEmptyList, OneOf, optional, Text } from "../tools/ToolInput.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import { FileToolError } from "../workspace/WorkspaceFiles.ts"
import * as WorkspacePath from "../workspace/WorkspacePath.ts"
import type { WorkspaceUnavailable } from "../workspace/WorkspaceUnavailable.ts"
import { ConverterFailed, quote, run } from "./DocumentRuntime.ts"
import type { DocumentCall } from "./DocumentTools.ts"
import * as MediaCommand from "./MediaCommand.ts"

const tool = <S extends ToolDef.Input, A>(
  config: ToolDef.Config<S> & {
    readonly handler: (
      input: S["Type"],
      ctx: DocumentCall
    ) => Effect.Effect<A | ToolOutcome.ToolOutcome, FileToolError | WorkspaceUnavailable | ConverterFailed>
  }
) => ToolDef.make(config)

const file = (path: string, field: string) => {
  const p = WorkspacePath.resolve(path)
  if ("error" in p) return Effect.fail(FileToolError.of(`${field}: ${p.error}`))
  if (p.relative === ".") return Effect.fail(FileToolError.of(`${field}: give a file path, not the workspace root`))
  return Effect.succeed(p)
}

/** Runs a media command; a non-zero exit is `media_error` with the tool's last lines. */
const media = (ctx: DocumentCall, command: string, stdin?: string) =>
  Effect.flatMap(
    run(ctx, "media_error", { command, ...(stdin === undefined ? {} : { stdin }) }),
    (r) =>
      r.exitCode === 0
        ? Effect.succeed(r.stdout)
        : Effect.fail(
          new ConverterFailed({
            code: "media_error",
            // Paths as the model gave them, relative to the workspace root.
            message: ctx.mask(
              r.stderr.trim().split("\n").slice(-6).join("\n").replaceAll("/workspace/", "") ||
                `exit code ${r.exitCode}`
            )
          })
        )
  )

/** A number ffprobe writes as a string ("12.5") or a number; anything else is left out. */
const num = (v: string | number | undefined): number | undefined => {
  const n = typeof v === "string" ? Number(v) : v ?? Number.NaN
  return Number.isFinite(n) ? n : undefined
}
/** A frame rate as ffprobe writes it ("30000/1001"), rounded to two decimals. */
const rate = (v: string | undefined): number | undefined => {
  const [a, b] = v === undefined ? [] : v.split("/").map(Number)
  return a !== undefined && b !== undefined && b > 0 ? Math.round((a / b) * 100) / 100 : undefined
}

const Numeric = Schema.optional(Schema.Union([Schema.String, Schema.Number]))

/** What media_probe reads of `ffprobe -print_format json -show_format -show_streams` (other fields ignored). */
const Probe = Schema.Struct({
  format: Schema.optional(Schema.Struct({
    format_name: Schema.optional(Schema.String),
    duration: Numeric,
    size: Numeric,
    bit_rate: Numeric
  })),
  streams: Schema.optional(Schema.Array(Schema.Struct({
    index: Schema.optional(Schema.Number),
    codec_type: Schema.optional(Schema.String),
    codec_name: Schema.optional(Schema.String),
    width: Schema.optional(Schema.Number),
    height: Schema.optional(Schema.Number),
    avg_frame_rate: Schema.optional(Schema.String),
    sample_rate: Numeric,
    channels: Schema.optional(Schema.Number),
    duration: Numeric
  })))
})
const decodeProbe = Schema.decodeUnknownEffect(Schema.fromJsonString(Probe))

export const mediaProbe = tool({
  name: "media_probe",
  description:
    "Describe a video, audio or image file of the workspace (ffprobe): container, duration in seconds, size, and each stream's type, codec, width and height, frame rate, sample rate and channels.",
  input: Schema.Struct({ path: NonEmpty("Path of the media file, relative to the workspace root.") }),
  handler: ({ path }, ctx) =>
    Effect.gen(function*() {
      const p = yield* file(path, "path")
      const stdout = yield* media(
        ctx,
        `exec ffprobe -v error -print_format json -show_format -show_streams -- ${quote(p.inner)}`
      )
      const probed = yield* decodeProbe(stdout).pipe(
        Effect.mapError(() =>
          new ConverterFailed({ code: "media_error", message: "ffprobe's answer could not be read" })
        )
      )
      const format = probed.format
      const output = {
        path: p.relative,
        format: format?.format_name,
        duration: num(format?.duration),
        sizeBytes: num(format?.size),
        bitRate: num(format?.bit_rate),
        streams: (probed.streams ?? []).map((s) => ({
          index: s.index,
          type: s.codec_type,
          codec: s.codec_name,
          ...(s.width === undefined ? {} : { width: s.width, height: s.height }),
          ...(rate(s.avg_frame_rate) === undefined ? {} : { frameRate: rate(s.avg_frame_rate) }),
          ...(num(s.sample_rate) === undefined ? {} : { sampleRate: num(s.sample_rate), channels: s.channels }),
          ...(num(s.duration) === undefined ? {} : { duration: num(s.duration) })
        }))
      }
      return ToolOutcome.success(output)
    })
})

const Seconds = (description: string) => Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)).annotate({ description })
const Pixels = (description: string) =>
  Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)).annotate({ description })

export const mediaEdit = tool({
  name: "media_edit",
  description:
    "Edit media with ffmpeg (ImageMagick for image conversions) into `output` (its extension picks the format). Operations: convert (transcode a video/audio or convert an image), trim (`start`, `end` or `duration` in seconds), concatenate (`inputs` in order), resize (`width` and/or `height`), crop (`width`, `height`, `x`, `y`), extract_frames (`output` a directory; `fps`, default 1, frame-0001.png ...), extract_audio, replace_audio (`audio`), overlay_text (`text`, `x`, `y`, `fontSize`, `color`), overlay_image (`image`, `x`, `y`).",
  input: Schema.Struct({
    operation: OneOf(MediaCommand.operations, "What to do."),
    input: optional(NonEmpty("The input file (every operation but concatenate).")),
    inputs: optional(NonEmptyList("concatenate: the files, in order.")),
    output: NonEmpty("Where to write the result, relative to the workspace root."),
    start: optional(Seconds("trim, extract_frames: from this second.")),
    end: optional(Seconds("trim, extract_frames: up to this second.")),
    duration: optional(Seconds("trim: this many seconds (instead of end).")),
    width: optional(Pixels("resize, crop: width in pixels.")),
    height: optional(Pixels("resize, crop: height in pixels.")),
    x: optional(Pixels("crop, overlay_text, overlay_image: left edge in pixels.")),
    y: optional(Pixels("crop, overlay_text, overlay_image: top edge in pixels.")),
    fps: optional(
      Schema.Number.check(Schema.isGreaterThan(0)).annotate({ description: "extract_frames: frames per second." })
    ),
    audio: optional(NonEmpty("replace_audio: the audio file.")),
    image: optional(NonEmpty("overlay_image: the image to put over the input.")),
    text: optional(Text("overlay_text: the text.")),
    fontSize: optional(Pixels("overlay_text: font size in pixels (default 32).")),
    color: optional(NonEmpty("overlay_text: a colour name or #RRGGBB (default white)."))
  }),
  handler: (input, ctx) =>
    Effect.gen(function*() {
      const out = yield* file(input.output, "output")
      const single = input.input === undefined ? undefined : yield* file(input.input, "input")
      const many = yield* Effect.forEach(input.inputs ?? [], (path, i) => file(path, `inputs[${i}]`))
      const audio = input.audio === undefined ? undefined : yield* file(input.audio, "audio")
      const image = input.image === undefined ? undefined : yield* file(input.image, "image")
      const built = MediaCommand.build({
        ...input,
        input: single?.inner,
        inputs: many.map((p) => p.inner),
        output: out.inner,
        audio: audio?.inner,
        image: image?.inner
      })
      if ("error" in built) return yield* FileToolError.of(built.error)
      const parent = posix.dirname(out.inner)
      const stdout = yield* media(ctx, `mkdir -p -- ${quote(parent)} && ${built.command}`, built.stdin)
      const frames = input.operation === "extract_frames"
        ? stdout.split("\n").filter((l) => l.endsWith(".png")).map((name) => posix.join(out.relative, name))
        : undefined
      return ToolOutcome.success(
        { operation: input.operation, output: out.relative, ...(frames === undefined ? {} : { frames }) },
        frames === undefined
          ? `${input.operation}: wrote ${out.relative}.`
          : `extract_frames: wrote ${frames.length} frames to ${out.relative}/.`
      )
    })
})

export const mediaTools = [mediaProbe, mediaEdit]

/**
 * The command line of each `media_edit` operation (MediaTools), built from
 * checked paths (as the sandbox sees them) and numbers: ffmpeg for video,
 * audio and stills, ImageMagick's `convert` for image-to-image conversion.
 * Every argument is single-quoted; text to draw travels on stdin into a
 * file, never through a filter's syntax.
 */
import { posix } from "node:path"
import { quote } from "./DocumentRuntime.ts"

export const operations = [
  "convert",
  "trim",
  "concatenate",
  "resize",
  "crop",
  "extract_frames",
  "extract_audio",
  "replace_audio",
  "overlay_text",
  "overlay_image"
] as const

export type Operation = (typeof operations)[number]

export interface EditRequest {
  readonly operation: Operation
  readonly input: string | undefined
  readonly inputs: ReadonlyArray<string>
  readonly output: string
  readonly start?: number | undefined
  readonly end?: number | undefined
  readonly duration?: number | undefined
  readonly width?: number | undefined
  readonly height?: number | undefined
  readonly x?: number | undefined
  readonly y?: number | undefined
  readonly fps?: number | undefined
  readonly audio: string | undefined
  readonly image: string | undefined
  readonly text?: string | undefined
  readonly fontSize?: number | undefined
  readonly color?: string | undefined
}

const images = new Set(["png", "jpg", "jpeg", "gif", "webp", "bmp", "tif", "tiff"])
const isImage = (path: string) => images.has(posix.extname(path).slice(1).toLowerCase())
const ffmpeg = "ffmpeg -hide_banner -loglevel error -nostdin -y"
/** A still image is one frame out. */
const still = (output: string) => (isImage(output) ? " -frames:v 1 -update 1" : "")
const scratch =
  "mkdir -p /workspace/.svc/tmp && T=$(mktemp /workspace/.svc/tmp/media-XXXXXX) && trap 'rm -f \"$T\"' EXIT"

export const build = (
  r: EditRequest
): { readonly command: string; readonly stdin?: string } | { readonly error: string } => {
  const out = quote(r.output)
  if (r.operation === "concatenate") {
    if (r.inputs.length < 2) return { error: "inputs: concatenate needs at least two files" }
    if (r.inputs.includes(r.output)) return { error: "output: must not be one of the inputs" }
    // The concat demuxer's list, written from stdin: `file '<path>'` lines.
    const list = r.inputs.map((p) => `file '${p.replaceAll("'", "'\\''")}'\n`).join("")
    return { command: `${scratch} && cat > "$T" && ${ffmpeg} -f concat -safe 0 -i "$T" ${out}`, stdin: list }
  }
  if (r.input === undefined) return { error: `input: ${r.operation} needs an input file` }
  if (r.input === r.output) return { error: "output: must differ from the input" }
  const input = quote(r.input)
  const filter = (vf: string) => ({ command: `${ffmpeg} -i ${input} -vf ${quote(vf)}${still(r.output)} ${out}` })
  switch (r.operation) {
    case "convert":
      return isImage(r.input) && isImage(r.output)
        ? { command: `exec convert ${input} ${out}` }
        : { command: `${ffmpeg} -i ${input}${still(r.output)} ${out}` }
    case "trim": {
      if (r.end !== undefined && r.duration !== undefined) return { error: "trim: give end or duration, not both" }
      if (r.end !== undefined && r.end <= (r.start ?? 0)) return { error: "end: must be after start" }
      if (r.start === undefined && r.end === undefined && r.duration === undefined) {
        return { error: "trim: give start, end or duration" }
      }
      const span = r.end !== undefined ? ` -to ${r.end}` : r.duration !== undefined ? ` -t ${r.duration}` : ""
      return { command: `${ffmpeg} -i ${input} -ss ${r.start ?? 0}${span} ${out}` }
    }
    case "resize":
      if (r.width === undefined && r.height === undefined) return { error: "resize: give width, height or both" }
      return filter(`scale=${r.width ?? -2}:${r.height ?? -2}`)
    case "crop":
      if (r.width === undefined || r.height === undefined) return { error: "crop: give width and height" }
      return filter(`crop=${r.width}:${r.height}:${r.x ?? 0}:${r.y ?? 0}`)
    case "extract_frames": {
      const fps = r.fps ?? 1
      const span = `${r.start === undefined ? "" : ` -ss ${r.start}`}${r.end === undefined ? "" : ` -to ${r.end}`}`
      return {
        command: `mkdir -p -- ${out} && ${ffmpeg}${span} -i ${input} -vf ${quote(`fps=${fps}`)} ${
          quote(`${r.output}/frame-%04d.png`)
        } && ls -1 -- ${out}`
      }
    }
    case "extract_audio":
      return { command: `${ffmpeg} -i ${input} -vn ${out}` }
    case "replace_audio":
      if (r.audio === undefined) return { error: "audio: replace_audio needs the audio file" }
      return {
        command: `${ffmpeg} -i ${input} -i ${quote(r.audio)} -map 0:v:0 -map 1:a:0 -c:v copy -shortest ${out}`
      }
    case "overlay_text": {
      if (r.text === undefined || r.text === "") return { error: "text: overlay_text needs the text" }
      const color = r.color ?? "white"
      if (!/^(#[0-9a-fA-F]{6}|[a-zA-Z]+)$/.test(color)) return { error: "color: a colour name or #RRGGBB" }
      // expansion=none: the text is drawn as it is (`%` is not a template).
      const draw = `drawtext=textfile=$T:expansion=none:font=Sans:fontsize=${r.fontSize ?? 32}:fontcolor=${color}:x=${
        r.x ?? 10
      }:y=${r.y ?? 10}`
      return {
        command: `${scratch} && cat > "$T" && ${ffmpeg} -i ${input} -vf "${draw}"${still(r.output)} ${out}`,
        stdin: r.text
      }
    }
    case "overlay_image":
      // format=auto: RGB inputs stay RGB (the default yuv420 shifts an image's colours, red 255 to 253).
      if (r.image === undefined) return { error: "image: overlay_image needs the image" }
      return {
        command: `${ffmpeg} -i ${input} -i ${quote(r.image)} -filter_complex ${
          quote(`[0:v][1:v]overlay=${r.x ?? 0}:${r.y ?? 0}:format=auto`)
        }${still(r.output)} ${out}`
      }
  }
}

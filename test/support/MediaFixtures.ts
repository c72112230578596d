/**
 * Real media for view_media's tests: made by ffmpeg in the test (a coloured
 * PNG, a PNG of noise, a short video, a tone), and a PDF of one page per text with a correct
 * cross-reference table (poppler renders it).
 */
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

/** The bytes ffmpeg writes for `args` (lavfi sources) to a file named `name`. */
export const ffmpegMade = (args: ReadonlyArray<string>, name: string): Effect.Effect<Uint8Array> =>
  Effect.promise(async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-media-test-"))
    try {
      await run("ffmpeg", ["-v", "error", ...args, "-y", join(dir, name)])
      return new Uint8Array(await readFile(join(dir, name)))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

/** A `width`x`height` PNG of one colour. */
export const png = (color: string, width: number, height: number) =>
  ffmpegMade(["-f", "lavfi", "-i", `color=c=${color}:s=${width}x${height}`, "-frames:v", "1"], "image.png")

/** A `width`x`height` PNG of random pixels: it does not compress, so it is about 3 bytes a pixel. */
export const noisyPng = (width: number, height: number): Effect.Effect<Uint8Array> =>
  Effect.promise(async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-media-test-"))
    try {
      await writeFile(join(dir, "noise.raw"), randomBytes(width * height * 3))
      const input = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", `${width}x${height}`, "-i", join(dir, "noise.raw")]
      await run("ffmpeg", ["-v", "error", ...input, "-frames:v", "1", "-y", join(dir, "noise.png")])
      return new Uint8Array(await readFile(join(dir, "noise.png")))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

/** A `seconds` long MP4 of ffmpeg's test pattern, 320x240 at 10 frames a second. */
export const video = (seconds: number) =>
  ffmpegMade(
    ["-f", "lavfi", "-i", `testsrc=duration=${seconds}:size=320x240:rate=10`, "-pix_fmt", "yuv420p"],
    "clip.mp4"
  )

/** A `seconds` long WAV tone. */
export const tone = (seconds: number) =>
  ffmpegMade(["-f", "lavfi", "-i", `sine=frequency=440:duration=${seconds}`], "tone.wav")

/** A PDF with one page (400x144 pt) saying each of `texts`. */
export const pdfOf = (texts: ReadonlyArray<string>): Uint8Array => {
  const objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
  const kids: Array<string> = []
  for (const text of texts) {
    const content = `BT /F1 18 Tf 20 100 Td (${text}) Tj ET`
    const page = objects.length + 1
    kids.push(`${page} 0 R`)
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 144] /Contents ${page + 1} 0 R /Resources << /Font << /F1 ${
        page + 2
      } 0 R >> >> >>`,
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
      "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    )
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.join(" ")}] /Count ${texts.length} >>`
  let body = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((object, i) => {
    offsets.push(body.length)
    body += `${i + 1} 0 obj\n${object}\nendobj\n`
  })
  const xref = body.length
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  body += offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return new Uint8Array(Buffer.from(body, "latin1"))
}

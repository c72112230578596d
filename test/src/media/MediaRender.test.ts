/**
 * view_media's rendering with the host's real programs: an oversized image
 * re-encoded at the fidelity's long edge (ffmpeg), a PDF's first six pages of
 * eight (pdftoppm), an audio over the length bound refused (ffprobe), and a
 * program the host lacks answered as `media_runtime_unavailable` naming it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { exec } from "../../../src/media/view/MediaProcess.ts"
import { audioSeconds, pdfPages, smallerImage } from "../../../src/media/view/MediaRender.ts"
import { fidelityProfiles } from "../../../src/media/view/ViewLimits.ts"
import { ffmpegMade, pdfOf, png } from "../../support/MediaFixtures.ts"

/** `width`x`height` of an image, as ffprobe reads it. */
const sizeOf = (bytes: Uint8Array) =>
  Effect.promise(async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-media-size-"))
    try {
      await writeFile(join(dir, "in"), bytes)
      const { stdout } = await promisify(execFile)("ffprobe", [
        "-v",
        "error",
        "-show_entries",
        "stream=width,height",
        "-of",
        "csv=p=0",
        join(dir, "in")
      ])
      return stdout.trim()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

describe("view_media rendering", () => {
  it.effect("an image is re-encoded as JPEG at the fidelity's long edge", () =>
    Effect.gen(function*() {
      const wide = yield* png("blue", 2000, 1000)
      const standard = yield* smallerImage(wide, fidelityProfiles.standard)
      assert.deepStrictEqual([...standard.subarray(0, 3)], [0xff, 0xd8, 0xff])
      assert.strictEqual(yield* sizeOf(standard), "768,384")
      assert.strictEqual(yield* sizeOf(yield* smallerImage(wide, fidelityProfiles.spatial)), "1568,784")
    }), 60_000)

  it.effect(
    "a PDF: its first six pages, the count of all of them, at the fidelity's DPI",
    () =>
      Effect.gen(function*() {
        const pdf = pdfOf(Array.from({ length: 8 }, (_, i) => `Page ${i + 1}`))
        const rendered = yield* pdfPages(pdf, fidelityProfiles.standard)
        assert.deepStrictEqual([rendered.pages.length, rendered.totalPages, rendered.dpi], [6, 8, 96])
        // 400 x 144 pt at 96 DPI, then at 192 DPI.
        assert.strictEqual(yield* sizeOf(rendered.pages[0]), "534,192")
        const spatial = yield* pdfPages(pdf, fidelityProfiles.spatial)
        assert.strictEqual(yield* sizeOf(spatial.pages[0]), "1067,384")
      }),
    60_000
  )

  it.effect("audio over 300 s is refused; a PDF that is not one is unreadable", () =>
    Effect.gen(function*() {
      const long = yield* ffmpegMade(
        ["-f", "lavfi", "-i", "sine=frequency=220:duration=301", "-ar", "8000"],
        "long.wav"
      )
      const refused = yield* Effect.flip(audioSeconds(long))
      assert.deepStrictEqual([refused.code, refused.message], [
        "media_too_large",
        "The audio is 301.0 s long; view_media takes up to 300 s."
      ])
      const broken = yield* Effect.flip(
        pdfPages(new TextEncoder().encode("%PDF-1.4 nothing"), fidelityProfiles.standard)
      )
      assert.strictEqual(broken.code, "media_unreadable")
    }), 60_000)

  it.effect("a program the host lacks is media_runtime_unavailable, naming it and its package", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(exec("pdftoppm-not-installed", [], "PDF"))
      assert.strictEqual(missing.code, "media_runtime_unavailable")
      assert.strictEqual(
        missing.message,
        "This deployment cannot view PDF: pdftoppm-not-installed (pdftoppm-not-installed) is not installed on the host."
      )
    }))
})

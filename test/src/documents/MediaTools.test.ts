/**
 * The media tools (issue 29) through the workspace's tool family, on the real
 * sandbox with the host's ffmpeg and ImageMagick: a test clip made in the
 * sandbox is probed, trimmed (its duration checked with the host's ffprobe),
 * its frames extracted, a still resized and written over; two clips
 * concatenated, cropped, transcoded to WebM, their audio extracted and
 * replaced (each result read back with ffprobe); a PNG converted to JPEG and
 * an image overlaid (read back with ImageMagick); a malformed file fails the
 * call.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { ToolFamily } from "../../../src/tools/ToolFamily.ts"
import type { ToolOutcome } from "../../../src/tools/ToolOutcome.ts"
import { Sandbox } from "../../../src/workspace/Sandbox.ts"
import * as WorkspaceTools from "../../../src/workspace/WorkspaceTools.ts"
import { documentLimits, sandboxLayer } from "../../support/TestSandbox.ts"

const opened = Effect.gen(function*() {
  const sandbox = yield* Sandbox
  const workspace = yield* sandbox.open("ws_media", documentLimits)
  const tools = WorkspaceTools.make({ sandbox, workspace, shell: false, mediaEditing: true, env: {}, secrets: [] })
  return { sandbox, workspace, tools }
})

const call = (tools: ToolFamily, name: string, input: unknown): Effect.Effect<ToolOutcome> => {
  const run = tools.call(name, input, { id: "tc_test", step: 0 })
  assert.isDefined(run, `${name} is a tool of the family`)
  return run ?? Effect.die("unreachable")
}
const ok = (outcome: ToolOutcome) => {
  assert.isFalse(outcome.isError, JSON.stringify(outcome.output))
  return outcome
}

/** The host's ffprobe: a file's duration in seconds. */
const durationOf = (file: string) =>
  Number(execFileSync("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", file], {
    encoding: "utf8"
  }))
/** The host's ffprobe: each stream's type, codec and (for video) size or (for audio) sample rate and channels. */
const streamsOf = (file: string) =>
  execFileSync("ffprobe", [
    "-v",
    "error",
    "-show_entries",
    "stream=codec_type,codec_name,width,height,sample_rate,channels",
    "-of",
    "compact=p=0:nk=1",
    file
  ], { encoding: "utf8" }).trim().split("\n")
/** The host's ImageMagick: the colour of one pixel and the image's format and size. */
const magick = (file: string, format: string) =>
  execFileSync("convert", [file, "-format", format, "info:"], { encoding: "utf8" })
const pngSize = (file: string) => {
  const png = readFileSync(file)
  return [png.readUInt32BE(16), png.readUInt32BE(20)]
}

describe("media tools", () => {
  layer(sandboxLayer, { excludeTestServices: true })((it) => {
    it.effect(
      "media_probe describes a generated clip; media_edit trims it and ffprobe reads the new duration",
      () =>
        Effect.gen(function*() {
          const { sandbox, tools, workspace } = yield* opened
          assert.deepStrictEqual(tools.specs.map((s) => s.name).slice(-2), ["media_probe", "media_edit"])
          const made = yield* sandbox.exec(workspace, {
            command:
              "ffmpeg -hide_banner -loglevel error -nostdin -f lavfi -i testsrc=duration=4:size=320x240:rate=10 -f lavfi -i sine=frequency=440:duration=4 -shortest -pix_fmt yuv420p clip.mp4",
            timeoutMs: 120_000
          })
          assert.strictEqual(made.exitCode, 0, made.stderr)
          const probed = ok(yield* call(tools, "media_probe", { path: "clip.mp4" }))
          const output = probed.output
          assert.isTrue(typeof output === "object" && output !== null)
          if (typeof output !== "object" || output === null || !("streams" in output) || !("duration" in output)) return
          assert.approximately(Number(output.duration), 4, 0.1)
          assert.deepStrictEqual(
            (Array.isArray(output.streams) ? output.streams : []).map((
              s: { type: string; width?: number }
            ) => [s.type, s.width]),
            [["video", 320], ["audio", undefined]]
          )
          const trimmed = ok(
            yield* call(tools, "media_edit", {
              operation: "trim",
              input: "clip.mp4",
              output: "cuts/clip-trimmed.mp4",
              start: 1,
              end: 2.5
            })
          )
          assert.deepStrictEqual(trimmed.output, { operation: "trim", output: "cuts/clip-trimmed.mp4" })
          assert.approximately(durationOf(join(workspace.dir, "cuts/clip-trimmed.mp4")), 1.5, 0.15)
        }),
      { timeout: 120_000 }
    )

    it.effect("extract_frames, resize and overlay_text write PNGs of the expected sizes", () =>
      Effect.gen(function*() {
        const { tools, workspace } = yield* opened
        const frames = ok(
          yield* call(tools, "media_edit", {
            operation: "extract_frames",
            input: "clip.mp4",
            output: "frames",
            fps: 1,
            end: 2
          })
        )
        assert.deepStrictEqual(frames.output, {
          operation: "extract_frames",
          output: "frames",
          frames: ["frames/frame-0001.png", "frames/frame-0002.png"]
        })
        ok(
          yield* call(tools, "media_edit", {
            operation: "resize",
            input: "frames/frame-0001.png",
            output: "small.png",
            width: 160
          })
        )
        assert.deepStrictEqual(pngSize(join(workspace.dir, "small.png")), [160, 120])
        ok(
          yield* call(tools, "media_edit", {
            operation: "overlay_text",
            input: "small.png",
            output: "captioned.png",
            text: "it's 100% \"quoted\": ok",
            fontSize: 14
          })
        )
        assert.deepStrictEqual(pngSize(join(workspace.dir, "captioned.png")), [160, 120])
        assert.notDeepEqual(
          readFileSync(join(workspace.dir, "captioned.png")),
          readFileSync(join(workspace.dir, "small.png"))
        )
      }), { timeout: 120_000 })

    it.effect(
      "concatenate, crop, convert (mp4 to webm), extract_audio and replace_audio, read back with ffprobe",
      () =>
        Effect.gen(function*() {
          const { sandbox, tools, workspace } = yield* opened
          const at = (path: string) => join(workspace.dir, path)
          const lavfi = "ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i"
          const made = yield* sandbox.exec(workspace, {
            command: [
              `${lavfi} testsrc=duration=1:size=160x120:rate=10 -f lavfi -i sine=frequency=440:duration=1 -pix_fmt yuv420p a.mp4`,
              `${lavfi} testsrc2=duration=1:size=160x120:rate=10 -f lavfi -i sine=frequency=880:duration=1 -pix_fmt yuv420p b.mp4`,
              `${lavfi} sine=frequency=660:duration=2:sample_rate=22050 -ac 1 tone.wav`
            ].join(" && "),
            timeoutMs: 120_000
          })
          assert.strictEqual(made.exitCode, 0, made.stderr)

          ok(
            yield* call(tools, "media_edit", { operation: "concatenate", inputs: ["a.mp4", "b.mp4"], output: "ab.mp4" })
          )
          assert.approximately(durationOf(at("ab.mp4")), 2, 0.1)
          assert.deepStrictEqual(streamsOf(at("ab.mp4")), ["h264|video|160|120", "aac|audio|44100|1"])

          ok(
            yield* call(tools, "media_edit", {
              operation: "crop",
              input: "a.mp4",
              output: "crop.mp4",
              width: 100,
              height: 60,
              x: 10,
              y: 20
            })
          )
          assert.deepStrictEqual(streamsOf(at("crop.mp4")), ["h264|video|100|60", "aac|audio|44100|1"])

          ok(yield* call(tools, "media_edit", { operation: "convert", input: "a.mp4", output: "a.webm" }))
          assert.deepStrictEqual(streamsOf(at("a.webm")), ["vp9|video|160|120", "opus|audio|48000|1"])
          assert.approximately(durationOf(at("a.webm")), 1, 0.1)

          ok(yield* call(tools, "media_edit", { operation: "extract_audio", input: "ab.mp4", output: "ab.m4a" }))
          assert.deepStrictEqual(streamsOf(at("ab.m4a")), ["aac|audio|44100|1"])
          assert.approximately(durationOf(at("ab.m4a")), 2, 0.1)

          ok(
            yield* call(tools, "media_edit", {
              operation: "replace_audio",
              input: "ab.mp4",
              audio: "tone.wav",
              output: "retoned.mp4"
            })
          )
          // The video stream copied as it is; the audio is the tone's (mono, 22050 Hz), encoded for mp4.
          assert.deepStrictEqual(streamsOf(at("retoned.mp4")), ["h264|video|160|120", "aac|audio|22050|1"])
          assert.approximately(durationOf(at("retoned.mp4")), 2, 0.15)
        }),
      { timeout: 180_000 }
    )

    it.effect(
      "convert png to jpg (ImageMagick) and overlay_image puts the overlay's exact colour at x, y",
      () =>
        Effect.gen(function*() {
          const { sandbox, tools, workspace } = yield* opened
          const at = (path: string) => join(workspace.dir, path)
          const made = yield* sandbox.exec(workspace, {
            command: "convert -size 320x240 xc:black base.png && convert -size 20x20 xc:red dot.png",
            timeoutMs: 60_000
          })
          assert.strictEqual(made.exitCode, 0, made.stderr)

          ok(yield* call(tools, "media_edit", { operation: "convert", input: "base.png", output: "base.jpg" }))
          assert.deepStrictEqual([...readFileSync(at("base.jpg")).subarray(0, 3)], [0xff, 0xd8, 0xff])
          assert.strictEqual(magick(at("base.jpg"), "%m %w %h"), "JPEG 320 240")

          ok(
            yield* call(tools, "media_edit", {
              operation: "overlay_image",
              input: "base.png",
              image: "dot.png",
              output: "dotted.png",
              x: 50,
              y: 40
            })
          )
          assert.deepStrictEqual(pngSize(at("dotted.png")), [320, 240])
          // Inside the overlay (its corners), and just outside it.
          assert.strictEqual(
            magick(at("dotted.png"), "%[pixel:p{50,40}] %[pixel:p{69,59}] %[pixel:p{49,40}] %[pixel:p{70,59}]"),
            "srgba(255,0,0,1) srgba(255,0,0,1) srgba(0,0,0,1) srgba(0,0,0,1)"
          )
        }),
      { timeout: 120_000 }
    )

    it.effect(
      "a malformed file fails the call with media_error; a bad request is refused before running",
      () =>
        Effect.gen(function*() {
          const { tools, workspace } = yield* opened
          writeFileSync(join(workspace.dir, "junk.mp4"), Buffer.from("not a video".repeat(50)))
          const junk = yield* call(tools, "media_edit", {
            operation: "trim",
            input: "junk.mp4",
            output: "j.mp4",
            start: 1
          })
          assert.isTrue(junk.isError)
          assert.match(junk.text, /^media_error: .*junk\.mp4/s)
          const probe = yield* call(tools, "media_probe", { path: "junk.mp4" })
          assert.isTrue(probe.isError)
          assert.match(probe.text, /^media_error: /)
          const same = yield* call(tools, "media_edit", {
            operation: "trim",
            input: "clip.mp4",
            output: "clip.mp4",
            start: 1
          })
          assert.strictEqual(same.text, "workspace_error: output: must differ from the input")
        }),
      { timeout: 60_000 }
    )
  })
})

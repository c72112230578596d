/**
 * The media tools (issue 29) through the workspace's tool family, on the real
 * sandbox with the host's ffmpeg and ImageMagick: a test clip made in the
 * sandbox is probed, trimmed (its duration checked with the host's ffprobe),
 * its frames extracted, a still resized and written over; a malformed file
 * fails the call.
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

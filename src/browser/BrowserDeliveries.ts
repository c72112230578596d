/**
 * Screenshots and downloads as artifacts (spec 2.1.2): a screenshot is
 * stored as a run artifact, shown to the model as an image part (the
 * ToolOutcome's `media`, as view_media's images) and dispatched to the export handler only when
 * `exports.include.browserScreenshots` is true; a finished download stays in
 * the workspace (`downloads/`) and is stored and dispatched only when
 * `browserDownloads` is true. The handler's ref is projected onto what the
 * model reads (`artifact.ref`, `artifact.block`), as for other exports.
 */
import { Effect } from "effect"
import { deliver } from "../artifacts/Deliverable.ts"
import { mediaTypeOf } from "../artifacts/MediaTypes.ts"
import { sha256Hex } from "../artifacts/StoredBytes.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import type { BrowserCall } from "./BrowserCall.ts"
import type { Download } from "./BrowserSession.ts"

export const deliverScreenshot = (ctx: BrowserCall, png: Uint8Array, pageUrl: string) => {
  const filename = `screenshot-${ctx.call.id}.png`
  const options = ctx.screenshots
  if (options === undefined) {
    const described = { pageUrl, mediaType: "image/png", bytes: png.byteLength, sha256: sha256Hex(png) }
    return Effect.succeed(
      ToolOutcome.success(described, `Screenshot of ${pageUrl} (image/png, ${png.byteLength} bytes), not stored.`)
    )
  }
  return Effect.map(
    deliver(options, {
      toolName: "browser_take_screenshot",
      call: ctx.call,
      index: 0,
      filename,
      mediaType: "image/png",
      bytes: png
    }),
    (delivered): ToolOutcome.ToolOutcome => {
      const outcome = ToolOutcome.success(
        { pageUrl, ...delivered },
        `Screenshot of ${pageUrl} (image/png, ${delivered.bytes} bytes). artifact: ${
          JSON.stringify(delivered.artifact)
        }`
      )
      // The model sees it as an image part (as view_media's images) when it was stored.
      const stored = delivered.svcArtifactId
      return stored === undefined ? outcome : {
        ...outcome,
        media: [{
          artifactId: stored,
          filename,
          mediaType: "image/png",
          bytes: delivered.bytes,
          sha256: delivered.sha256,
          as: "image"
        }]
      }
    }
  )
}

/** The downloads a call caused, exported when the agent exports browser downloads. */
export const deliverDownloads = (ctx: BrowserCall, downloads: ReadonlyArray<Download>) =>
  Effect.forEach(downloads, (download, i) => {
    const files = ctx.files
    const options = ctx.downloads
    if (download.state !== "completed" || options?.handlerId === undefined || files === undefined) {
      return Effect.succeed({ ...download })
    }
    return Effect.gen(function*() {
      const file = yield* files.read(download.path, ctx.maxBytes)
      const delivered = yield* deliver(options, {
        toolName: "browser_download",
        call: ctx.call,
        index: i + 1,
        filename: download.filename,
        mediaType: mediaTypeOf(download.filename, file.bytes),
        bytes: file.bytes
      })
      return { ...download, ...delivered }
    })
  })

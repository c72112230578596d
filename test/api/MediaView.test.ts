/**
 * `capabilities.mediaView` end to end on the scripted model: view_media looks
 * at an image from a URL, a PDF (pages rendered by pdftoppm), a short video
 * made by ffmpeg (frames sampled), a file id, an artifact id and a path in
 * the managed workspace; what it
 * renders is stored as `media` artifacts; `spatial` renders pages at twice
 * the DPI and three times the frames; a metadata address is a tool error, a
 * web page an unsupported type, audio on a route without a transcription
 * endpoint a clear error; `analysis` answers through the run's own route.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { introduction } from "../../src/model/ScriptedModel.ts"
import { agentWithThread, failureTextsOf, getRun, outputsOf, send, textOf, toolStep } from "../support/Conversation.ts"
import { listen } from "../support/HttpPeer.ts"
import { noisyPng, pdfOf, png, tone, video } from "../support/MediaFixtures.ts"
import * as TestServer from "../support/TestServer.ts"
import { parseWithAi } from "../support/UiStream.ts"
import { upload } from "../support/Uploads.ts"

const { expectOk, request } = TestServer

interface Fixtures {
  readonly base: string
  readonly red: Uint8Array
  readonly pdf: Uint8Array
  readonly clip: Uint8Array
  readonly noise: Uint8Array
}

class Site extends Context.Service<Site, Fixtures>()("test/MediaSite") {}

const SiteLayer = Layer.effect(Site)(Effect.gen(function*() {
  const red = yield* png("red", 64, 48)
  const clip = yield* video(2)
  const wav = yield* tone(1)
  // Over the 5,000,000 bytes an image is sent as it is.
  const noise = yield* noisyPng(1600, 1100)
  const pdf = pdfOf(["First page of the report", "Second page: revenue grew 12 percent"])
  const files: Record<string, readonly [string, Uint8Array | string]> = {
    "/red.png": ["image/png", red],
    "/report.pdf": ["application/pdf", pdf],
    "/clip.mp4": ["video/mp4", clip],
    "/noise.png": ["image/png", noise],
    "/tone.wav": ["audio/wav", wav],
    "/page.html": ["text/html", "<html><body>hello</body></html>"]
  }
  const port = yield* listen((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === "/to-metadata") {
      return res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end()
    }
    const file = files[req.url ?? ""]
    if (file === undefined) return res.writeHead(404).end()
    res.writeHead(200, { "content-type": file[0] })
    res.end(file[1])
  })
  return { base: `http://127.0.0.1:${port}`, red, pdf, clip, noise }
}))

const View = Schema.Struct({
  source: Schema.String,
  mediaType: Schema.String,
  bytes: Schema.Number,
  artifactId: Schema.String,
  shown: Schema.String,
  images: Schema.optionalKey(Schema.Array(Schema.String)),
  answer: Schema.optionalKey(Schema.String)
})
const views = (chunks: ReadonlyArray<{ readonly type: string }>) =>
  outputsOf(chunks).map((o) => Schema.decodeUnknownSync(View)(o))

const Metadata = Schema.Struct({ kind: Schema.String, mediaType: Schema.String, bytes: Schema.Number })
const metadataOf = (id: string) =>
  Effect.flatMap(request("GET", `/v1/artifacts/${id}/metadata`), (reply) => expectOk(reply, 200, Metadata))

const script = (...steps: ReadonlyArray<string>) => [...steps, "/text Looked."].join("\n")

const artifactId = /^art_[0-9A-Za-z]+$/

/** Rendering runs real ffmpeg and poppler processes (a few seconds; more on a loaded machine). */
const renderTimeout = 60_000

layer(Layer.merge(TestServer.layer(), SiteLayer), { timeout: TestServer.setupTimeout })("view_media", (it) => {
  it.effect(
    "auto: an image from a URL, a PDF's pages and a video's frames, each stored as run artifacts",
    () =>
      Effect.gen(function*() {
        const { base, red } = yield* Site
        const { thread } = yield* agentWithThread({ capabilities: { mediaView: { output: "auto" } } })
        const { parsed, runId } = yield* send(
          thread.id,
          script(
            toolStep("view_media", { source: `${base}/red.png` }),
            toolStep("view_media", { source: `${base}/report.pdf` }),
            toolStep("view_media", { source: `${base}/clip.mp4` })
          )
        )
        assert.strictEqual((yield* getRun(runId)).status, "completed")
        assert.deepStrictEqual(failureTextsOf(parsed.chunks), [])
        const [image, pdf, clip] = views(parsed.chunks)
        assert.match(image.artifactId, artifactId)
        assert.deepStrictEqual(image, {
          source: `${base}/red.png`,
          mediaType: "image/png",
          bytes: red.byteLength,
          artifactId: image.artifactId,
          shown: `the image red.png (image/png, ${red.byteLength} bytes)`,
          images: [image.artifactId]
        })
        assert.strictEqual(pdf.shown, "the PDF report.pdf: pages 1-2 of 2 at 96 DPI")
        assert.strictEqual(pdf.images?.length, 2)
        assert.strictEqual(clip.shown, "the video clip.mp4 (2.0 s): 4 frames at 0 s, 0.5 s, 1 s, 1.5 s")
        assert.strictEqual(clip.images?.length, 4)
        assert.deepStrictEqual(yield* metadataOf(image.artifactId), {
          kind: "media",
          mediaType: "image/png",
          bytes: red.byteLength
        })
        const page = yield* metadataOf(pdf.images?.[0] ?? "")
        assert.deepStrictEqual([page.kind, page.mediaType], ["media", "image/jpeg"])
        assert.deepStrictEqual((yield* metadataOf(pdf.artifactId)).mediaType, "application/pdf")
        assert.strictEqual(textOf(parsed.message), "Looked.")
      }),
    renderTimeout
  )

  it.effect("spatial: PDF pages at 192 DPI and 12 video frames", () =>
    Effect.gen(function*() {
      const { base } = yield* Site
      const { thread } = yield* agentWithThread({
        capabilities: { mediaView: {} },
        policies: { mediaFidelity: "spatial" }
      })
      const { parsed } = yield* send(
        thread.id,
        script(
          toolStep("view_media", { source: `${base}/report.pdf` }),
          toolStep("view_media", { source: `${base}/clip.mp4` })
        )
      )
      const [pdf, clip] = views(parsed.chunks)
      assert.strictEqual(pdf.shown, "the PDF report.pdf: pages 1-2 of 2 at 192 DPI")
      assert.strictEqual(clip.images?.length, 12)
      assert.match(clip.shown, /^the video clip\.mp4 \(2\.0 s\): 12 frames at 0 s, 0\.2 s, 0\.3 s, 0\.5 s, /)
    }), renderTimeout)

  it.effect(
    "an image over 5,000,000 bytes is re-encoded as a smaller JPEG, stored beside the original",
    () =>
      Effect.gen(function*() {
        const { base, noise } = yield* Site
        assert.isAbove(noise.byteLength, 5_000_000)
        const { thread } = yield* agentWithThread({ capabilities: { mediaView: {} } })
        const { parsed } = yield* send(thread.id, script(toolStep("view_media", { source: `${base}/noise.png` })))
        const [view] = views(parsed.chunks)
        assert.strictEqual(
          view.shown,
          `the image noise.png (${noise.byteLength} bytes, re-encoded as JPEG at most 768 px on its long edge)`
        )
        assert.deepStrictEqual((yield* metadataOf(view.artifactId)).bytes, noise.byteLength)
        const sent = yield* metadataOf(view.images?.[0] ?? "")
        assert.strictEqual(sent.mediaType, "image/jpeg")
        assert.isBelow(sent.bytes, 5_000_000)
      }),
    renderTimeout
  )

  it.effect("a file id and an artifact id are sources too", () =>
    Effect.gen(function*() {
      const { red } = yield* Site
      const file = yield* upload({ filename: "photo.png", type: "image/png", data: red })
      const { thread } = yield* agentWithThread({ capabilities: { mediaView: { output: "auto" } } })
      const first = yield* send(thread.id, script(toolStep("view_media", { source: file.id })))
      const [fromFile] = views(first.parsed.chunks)
      assert.strictEqual(fromFile.shown, `the image photo.png (image/png, ${red.byteLength} bytes)`)
      // Viewing an artifact again stores nothing new: the same artifact is shown.
      const again = yield* send(thread.id, script(toolStep("view_media", { source: fromFile.artifactId })))
      const [fromArtifact] = views(again.parsed.chunks)
      assert.strictEqual(fromArtifact.artifactId, fromFile.artifactId)
      assert.deepStrictEqual(fromArtifact.images, [fromFile.artifactId])
    }))

  it.effect("a path in the managed workspace is a source: an attached image placed there", () =>
    Effect.gen(function*() {
      const { red } = yield* Site
      const file = yield* upload({ filename: "photo.png", type: "image/png", data: red })
      const { thread } = yield* agentWithThread({
        capabilities: { mediaView: {} },
        workspace: { type: "managed", network: { mode: "offline" } }
      })
      const reply = yield* request("POST", `/v1/threads/${thread.id}/messages`, {
        body: {
          input: {
            text: script(toolStep("view_media", { source: "attachments/photo.png" })),
            attachments: [{ fileId: file.id }]
          }
        }
      })
      const parsed = yield* Effect.orDie(parseWithAi(reply.text))
      assert.deepStrictEqual(failureTextsOf(parsed.chunks), [])
      const [view] = views(parsed.chunks)
      assert.strictEqual(view.shown, `the image photo.png (image/png, ${red.byteLength} bytes)`)
      assert.deepStrictEqual(yield* metadataOf(view.artifactId), {
        kind: "media",
        mediaType: "image/png",
        bytes: red.byteLength
      })
    }))

  it.effect("refusals are tool errors the model reads", () =>
    Effect.gen(function*() {
      const { base } = yield* Site
      const { thread } = yield* agentWithThread({ capabilities: { mediaView: {} } })
      const { parsed, runId } = yield* send(
        thread.id,
        script(
          toolStep("view_media", { source: `${base}/to-metadata` }),
          toolStep("view_media", { source: "http://169.254.169.254/latest/meta-data/" }),
          toolStep("view_media", { source: `${base}/page.html` }),
          toolStep("view_media", { source: `${base}/tone.wav` }),
          toolStep("view_media", { source: "art_doesnotexist" }),
          toolStep("view_media", { source: "photos/cat.png" })
        )
      )
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      assert.deepStrictEqual(failureTextsOf(parsed.chunks), [
        "url_not_allowed: The URL is not allowed: http://169.254.169.254/latest/meta-data/ points to 169.254.169.254 is a link-local or cloud metadata address.",
        "url_not_allowed: The URL is not allowed: http://169.254.169.254/latest/meta-data/ points to 169.254.169.254 is a link-local or cloud metadata address.",
        `unsupported_media_type: ${base}/page.html is 'text/html': view_media shows images (PNG, JPEG, WebP, GIF), PDFs, video and audio.`,
        "transcription_unavailable: This agent's model route (scripted) has no transcription endpoint: audio can be viewed only on a band routed to an OpenAI-compatible provider (openai:<model>).",
        "media_source_not_found: The artifact art_doesnotexist was not found in this workspace.",
        "media_source_not_found: 'photos/cat.png' is not an https URL, a file id (file_...) or an artifact id (art_...), and this agent has no workspace to read it from."
      ])
    }))

  it.effect("analysis: the run's own route answers the question; only its answer enters the conversation", () =>
    Effect.gen(function*() {
      const { base, red } = yield* Site
      const { thread } = yield* agentWithThread({ capabilities: { mediaView: { output: "analysis" } } })
      const { parsed } = yield* send(
        thread.id,
        script(toolStep("view_media", { source: `${base}/red.png`, question: "What colour is it?" }))
      )
      const [view] = views(parsed.chunks)
      // The scripted model echoes what it was asked: the media line and the question (a conversation of its own, so
      // it opens with what the scripted model is).
      assert.strictEqual(
        view.answer,
        `${introduction}\n\nEcho: Media: the image red.png (image/png, ${red.byteLength} bytes).\nQuestion: What colour is it?`
      )
      assert.isUndefined(view.images)
    }))
})

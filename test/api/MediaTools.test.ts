/**
 * `capabilities.media` end to end (spec 2.1.1, 2.1.2, 4.5, 6.1, 7) on the
 * scripted model, with aimock as OpenAI's images, speech and videos endpoints
 * and ElevenLabs' music and sound generation (behind a proxy that keeps each
 * request as sent): each tool makes its file in the provider's wire shape, the
 * file is delivered to the agent's export handler (signed, checked with
 * Stripe's verifier; inline base64 up to 1 MiB, a url transfer handle above)
 * and the model reads the handler's reference; a video job is polled on the
 * test clock and cancelled with its run; each generation is its own line of
 * the usage receipt, and a budget stops a run between two images; a kind the
 * deployment lacks is refused (400 media_runtime_unconfigured, naming it).
 */
import { assert } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { createHash } from "node:crypto"
import { IdGenerator } from "../../src/IdGenerator.ts"
import type { MediaConfig } from "../../src/media/MediaConfig.ts"
import { aimock, apiKey, redactedKey } from "../support/Aimock.ts"
import * as Collection from "../support/Collection.ts"
import {
  agentWithThread,
  bashStep,
  callIdsOf,
  chunksUntil,
  failureTextsOf,
  firstDataOf,
  getRun,
  outputsOf,
  send,
  startRun,
  streamOf,
  textOf,
  toolStep
} from "../support/Conversation.ts"
import * as HookServer from "../support/HookServer.ts"
import { approveAll } from "../support/Interactions.ts"
import { fileServer, type RawRecorder, rawRecorder } from "../support/MediaPeers.ts"
import { checkDispatch, createHandler, receivedSince } from "../support/ResultHandlerDeliveries.ts"
import * as TestServer from "../support/TestServer.ts"
import * as Uploads from "../support/Uploads.ts"

const { expectError, request } = TestServer

/** A 1x1 PNG. */
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64"
)
/** An image over the 1 MiB inline limit (a PNG signature and padding). */
const largePng = Buffer.concat([png, Buffer.alloc(1_100_000, 7)])
const speechBytes = Buffer.from("ID3 spoken summary bytes")
const soundBytes = Buffer.from("ID3 door creak bytes")
const musicBytes = Buffer.from("ID3 calm piano bytes")
const videoBytes = Buffer.from("....ftypmp42 a short video")
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

class Peers extends Context.Service<Peers, {
  readonly recorder: RawRecorder
  /** aimock itself (the test flips a video job's state there). */
  readonly mockUrl: string
}>()("test/MediaPeers") {}

const route = (
  kind: keyof MediaConfig["routes"],
  provider: "openai" | "elevenlabs",
  model: string,
  centsPerUnit: number | null
) => ({ kind, provider, model, route: `${provider}:${model}`, centsPerUnit, strict: false })

/** Every kind but music priced; OpenAI at `<proxy>/v1`, ElevenLabs at the proxy's root. */
const mediaAt = (url: string): MediaConfig => ({
  routes: {
    image: route("image", "openai", "gpt-image-1", 4),
    video: route("video", "openai", "sora-2", 10),
    speech: route("speech", "openai", "gpt-4o-mini-tts", 1.5),
    music: route("music", "elevenlabs", "music_v1", null),
    soundEffect: route("soundEffect", "elevenlabs", "eleven_text_to_sound_v2", 0.2)
  },
  openai: { baseUrl: `${url}/v1`, apiKey: Option.some(redactedKey) },
  elevenlabs: { baseUrl: url, apiKey: Option.some(redactedKey) }
})

const Harness = Layer.unwrap(Effect.gen(function*() {
  const files = yield* fileServer({ "/videos/poll.mp4": { bytes: videoBytes, type: "video/mp4" } })
  const mock = yield* aimock((m) => {
    m.onImage("a red fox", { image: { b64Json: b64(png), revisedPrompt: "a red fox in snow" } })
    m.onImage("a huge mural", { image: { b64Json: b64(largePng) } })
    m.onImage("a lighthouse", { image: { b64Json: b64(png) } })
    m.on({ userMessage: "a forbidden scene", endpoint: "image" }, {
      error: { message: "Your request was rejected by the safety system.", type: "invalid_request_error" },
      status: 400
    })
    m.onSpeech("The fox", { audio: b64(speechBytes), format: "mp3" })
    m.onSoundEffect("door creak", { audio: b64(soundBytes) })
    m.onMusic("calm piano", { audio: b64(musicBytes) })
    m.onVideo("a fox running", { video: { id: "video_poll", status: "processing" } })
    m.onVideo("finish the fox", {
      video: { id: "video_poll", status: "completed", url: `${files.url}/videos/poll.mp4` }
    })
    m.onVideo("a slow sunset", { video: { id: "video_cancel", status: "processing" } })
  })
  const recorder = yield* rawRecorder(mock.url)
  return Layer.mergeAll(
    TestServer.layer({ media: mediaAt(recorder.url) }),
    HookServer.HookServer.layer,
    Layer.succeed(Peers)({ recorder, mockUrl: mock.url })
  )
}))

const media = { image: true, video: true, speech: true, music: true, soundEffect: true }

/** The JSON bodies the providers received at `path`, in order. */
const sentTo = (path: string) =>
  Effect.map(
    Peers,
    ({ recorder }) =>
      recorder.requests().filter((r) => r.path === path).map((r) => TestServer.parseJson(r.body.toString("utf8")))
  )

const Usage = Schema.Struct({
  costCents: Schema.Number,
  mediaGenerations: Schema.optionalKey(Schema.Array(Schema.Unknown))
})

/** The progress texts about the video job in a stream so far. */
const videoProgress = (chunks: ReadonlyArray<{ readonly type: string }>) =>
  chunks.flatMap((c) =>
    c.type === "data-svc-progress" && "data" in c && typeof c.data === "object" && c.data !== null &&
      "text" in c.data && typeof c.data.text === "string" && c.data.text.startsWith("Generating a video")
      ? [c.data.text]
      : []
  )

TestServer.suiteWith(Harness)("media generation", (it) => {
  it.effect(
    "an image, a spoken summary and a sound effect in one run: each sent in its provider's shape, delivered signed to the handler, the model reading the handler's reference",
    () =>
      Effect.gen(function*() {
        const server = yield* HookServer.HookServer
        const ids = yield* IdGenerator
        const { handler, path, secret } = yield* createHandler()
        yield* server.answerWith(HookServer.reply(200, {
          artifactId: "drv-1",
          url: "https://drive.example.com/drv-1",
          ref: { kind: "drive", id: "drv-1", block: "[[drv-1]]" }
        }))
        const { agent, thread } = yield* agentWithThread({
          capabilities: { media },
          artifacts: { exports: { resultHandlerId: handler.id } }
        })
        const before = (yield* server.received).length
        const sentAtMs = yield* Clock.currentTimeMillis
        const summary = "The fox crossed the river at dawn."
        const { parsed, runId } = yield* send(
          thread.id,
          [
            toolStep("generate_image", { prompt: "a red fox", size: "1024x1024" }),
            toolStep("generate_speech", { text: summary }),
            toolStep("generate_sound_effect", { text: "door creak" })
          ].join("\n")
        )
        assert.strictEqual((yield* getRun(runId)).status, "completed")
        assert.deepStrictEqual(failureTextsOf(parsed.chunks), [])

        // Each request in the provider's own wire shape.
        assert.deepStrictEqual(yield* sentTo("/v1/images/generations"), [
          { model: "gpt-image-1", prompt: "a red fox", n: 1, size: "1024x1024" }
        ])
        assert.deepStrictEqual(yield* sentTo("/v1/audio/speech"), [
          { model: "gpt-4o-mini-tts", input: summary, voice: "alloy", response_format: "mp3" }
        ])
        assert.deepStrictEqual(yield* sentTo("/v1/sound-generation"), [
          { text: "door creak", duration_seconds: 5, model_id: "eleven_text_to_sound_v2" }
        ])

        // One signed delivery per file, with the 6.1 body.
        const calls = callIdsOf(parsed.chunks)
        const received = yield* receivedSince(before)
        assert.strictEqual(received.length, 3)
        const expected = [
          { tool: "generate_image", bytes: png, type: "image/png" },
          { tool: "generate_speech", bytes: speechBytes, type: "audio/mpeg" },
          { tool: "generate_sound_effect", bytes: soundBytes, type: "audio/mpeg" }
        ]
        for (const [i, want] of expected.entries()) {
          const body = yield* checkDispatch(received[i], {
            path,
            secret,
            sentAtMs,
            requestId: ids.derive("request", `${runId}:${calls[i]}:export`),
            organizationId: "org_acme",
            agentId: agent.id,
            runId,
            handlerId: handler.id
          })
          assert.deepStrictEqual(body, {
            runId,
            threadId: thread.id,
            agentId: agent.id,
            toolName: want.tool,
            toolCallId: calls[i],
            stepNumber: i + 1,
            mediaType: want.type,
            bytes: want.bytes.byteLength,
            sha256: sha(want.bytes),
            content: { kind: "base64", base64: b64(want.bytes), mimeType: want.type }
          })
        }

        // What the stream shows and the model reads: the handler's locators and reference.
        const delivered = {
          export: { artifactId: "drv-1", url: "https://drive.example.com/drv-1" },
          artifact: { ref: { kind: "drive", id: "drv-1", block: "[[drv-1]]" }, block: "[[drv-1]]" }
        }
        const [image, speech, sound] = outputsOf(parsed.chunks)
        // Each file is also a stored artifact of the run, by its id (what GET /v1/artifacts/:id and view_media take).
        const idOf = (o: unknown) =>
          Schema.decodeUnknownSync(Schema.Struct({ svcArtifactId: Schema.String }))(o).svcArtifactId
        const artifactIds = [
          idOf(Schema.decodeUnknownSync(Schema.Struct({ images: Schema.Array(Schema.Unknown) }))(image).images[0]),
          idOf(speech),
          idOf(sound)
        ]
        for (const [i, id] of artifactIds.entries()) {
          assert.match(id, /^art_/)
          const stored = yield* Uploads.download(`/v1/artifacts/${id}`)
          assert.strictEqual(stored.status, 200)
          assert.deepStrictEqual(Buffer.from(stored.bytes), expected[i].bytes)
        }
        assert.deepStrictEqual(image, {
          route: "openai:gpt-image-1",
          images: [{
            svcArtifactId: artifactIds[0],
            filename: `image-${calls[0].slice(-8)}.png`,
            mediaType: "image/png",
            bytes: png.byteLength,
            sha256: sha(png),
            ...delivered
          }],
          revisedPrompts: ["a red fox in snow"],
          costCents: 4
        })
        assert.deepStrictEqual(speech, {
          route: "openai:gpt-4o-mini-tts",
          characters: summary.length,
          svcArtifactId: artifactIds[1],
          filename: `speech-${calls[1].slice(-8)}.mp3`,
          mediaType: "audio/mpeg",
          bytes: speechBytes.byteLength,
          sha256: sha(speechBytes),
          ...delivered,
          costCents: 0.051
        })
        assert.deepStrictEqual(sound, {
          route: "elevenlabs:eleven_text_to_sound_v2",
          durationSeconds: 5,
          svcArtifactId: artifactIds[2],
          filename: `sound_effect-${calls[2].slice(-8)}.mp3`,
          mediaType: "audio/mpeg",
          bytes: soundBytes.byteLength,
          sha256: sha(soundBytes),
          ...delivered,
          costCents: 1
        })
        // The scripted model answers with the last result it read: the handler's block is in it.
        assert.include(textOf(parsed.message), "\"block\":\"[[drv-1]]\"")

        // Each generation is its own line of the usage receipt, its cost in the total.
        const usage = Schema.decodeUnknownSync(Usage)(firstDataOf(parsed.chunks, "data-svc-usage"))
        assert.deepStrictEqual(usage.mediaGenerations, [
          {
            type: "media_generation",
            toolName: "generate_image",
            toolCallId: calls[0],
            kind: "image",
            route: "openai:gpt-image-1",
            unit: "image",
            quantity: 1,
            costCents: 4
          },
          {
            type: "media_generation",
            toolName: "generate_speech",
            toolCallId: calls[1],
            kind: "speech",
            route: "openai:gpt-4o-mini-tts",
            unit: "1k_characters",
            quantity: summary.length / 1000,
            costCents: 0.051
          },
          {
            type: "media_generation",
            toolName: "generate_sound_effect",
            toolCallId: calls[2],
            kind: "soundEffect",
            route: "elevenlabs:eleven_text_to_sound_v2",
            unit: "second",
            quantity: 5,
            costCents: 1
          }
        ])
        assert.strictEqual(usage.costCents, 5.051)
        assert.deepStrictEqual((yield* getRun(runId)).usage?.mediaGenerations, usage.mediaGenerations)
      }),
    60_000
  )

  it.effect("a file over 1 MiB goes to the handler as a url transfer handle this service serves, with its svcArtifactId", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const { handler } = yield* createHandler()
      yield* server.answerWith(HookServer.reply(200, { url: "https://drive.example.com/mural" }))
      const { thread } = yield* agentWithThread({
        capabilities: { media: { image: true } },
        artifacts: { exports: { resultHandlerId: handler.id } }
      })
      const before = (yield* server.received).length
      const { parsed } = yield* send(thread.id, toolStep("generate_image", { prompt: "a huge mural" }))
      const [received] = yield* receivedSince(before)
      const body = Schema.decodeUnknownSync(Schema.Struct({
        bytes: Schema.Number,
        sha256: Schema.String,
        content: Schema.Struct({
          kind: Schema.Literal("url"),
          url: Schema.String,
          mimeType: Schema.Literal("image/png"),
          svcArtifactId: Schema.String
        })
      }))(TestServer.parseJson(received.body))
      assert.strictEqual(body.bytes, largePng.byteLength)
      const fetched = yield* Uploads.download(
        new URL(body.content.url).pathname + new URL(body.content.url).search,
        null
      )
      assert.strictEqual(fetched.status, 200)
      assert.strictEqual(sha(fetched.bytes), sha(largePng))
      // No ref from the handler: the model gets the id-only transfer handle beside the durable URL.
      const [output] = outputsOf(parsed.chunks)
      const { images } = Schema.decodeUnknownSync(Schema.Struct({ images: Schema.Array(Schema.Unknown) }))(output)
      assert.deepStrictEqual(
        Schema.decodeUnknownSync(Schema.Struct({ export: Schema.Unknown, artifact: Schema.Unknown }))(
          images[0]
        ),
        {
          export: { url: "https://drive.example.com/mural" },
          artifact: { ref: { kind: "svc", id: body.content.svcArtifactId } }
        }
      )
    }))

  it.effect(
    "without a handler: the native svc handle (with 'include-svc-signed' a signed URL), edit_image from it; generatedDeliverables false sends nothing",
    () =>
      Effect.gen(function*() {
        const server = yield* HookServer.HookServer
        const { handler } = yield* createHandler()
        const before = (yield* server.received).length
        const { thread } = yield* agentWithThread({
          capabilities: { media: true },
          artifacts: {
            stream: { urls: "include-svc-signed" },
            exports: { resultHandlerId: handler.id, include: { generatedDeliverables: false } }
          }
        })
        const first = yield* send(thread.id, toolStep("generate_music", { prompt: "calm piano" }))
        assert.deepStrictEqual(failureTextsOf(first.parsed.chunks), [])
        const music = Schema.decodeUnknownSync(Schema.Struct({
          lengthMs: Schema.Number,
          artifact: Schema.Struct({
            ref: Schema.Struct({ kind: Schema.Literal("svc"), id: Schema.String }),
            url: Schema.String
          })
        }))(outputsOf(first.parsed.chunks)[0])
        assert.strictEqual(music.lengthMs, 30_000)
        assert.deepStrictEqual(yield* sentTo("/v1/music"), [{
          prompt: "calm piano",
          music_length_ms: 30_000,
          model_id: "music_v1"
        }])
        const served = yield* Uploads.download(
          new URL(music.artifact.url).pathname + new URL(music.artifact.url).search,
          null
        )
        assert.strictEqual(served.status, 200)
        assert.deepStrictEqual(Buffer.from(served.bytes), musicBytes)

        // An image, then edit_image from its artifact id: the source goes to /images/edits as a file.
        const image = yield* send(thread.id, toolStep("generate_image", { prompt: "a lighthouse" }))
        const { images } = Schema.decodeUnknownSync(Schema.Struct({
          images: Schema.Array(
            Schema.Struct({ artifact: Schema.Struct({ ref: Schema.Struct({ id: Schema.String }) }) })
          )
        }))(outputsOf(image.parsed.chunks)[0])
        const edited = yield* send(
          thread.id,
          toolStep("edit_image", { source: images[0].artifact.ref.id, prompt: "a red fox by the lighthouse" })
        )
        assert.deepStrictEqual(failureTextsOf(edited.parsed.chunks), [])
        const { recorder } = yield* Peers
        const edit = recorder.requests().filter((r) => r.path === "/v1/images/edits")
        assert.strictEqual(edit.length, 1)
        assert.match(edit[0].contentType, /^multipart\/form-data; boundary=/)
        const form = yield* Effect.promise(() =>
          new Response(edit[0].body, { headers: { "content-type": edit[0].contentType } }).formData()
        )
        assert.strictEqual(form.get("model"), "gpt-image-1")
        assert.strictEqual(form.get("prompt"), "a red fox by the lighthouse")
        const source = form.get("image")
        assert.isTrue(source instanceof Blob)
        if (source instanceof Blob) {
          assert.deepStrictEqual(Buffer.from(yield* Effect.promise(() => source.arrayBuffer())), png)
        }
        // generatedDeliverables false: none of them went to the handler.
        assert.strictEqual((yield* receivedSince(before)).length, 0)
      }),
    60_000
  )

  it.effect(
    "with a managed workspace each file is placed under media/ (its path returned), and edit_image reads a workspace path",
    () =>
      Effect.gen(function*() {
        const { thread } = yield* agentWithThread({
          capabilities: { media: { image: true } },
          workspace: { type: "managed", shell: true, network: { mode: "offline" } }
        })
        const before = (yield* sentTo("/v1/images/edits")).length
        const { parsed } = yield* send(
          thread.id,
          [
            toolStep("generate_image", { prompt: "a lighthouse" }),
            bashStep("cp media/image-*.png media/source.png && od -An -tx1 -N8 media/source.png"),
            toolStep("edit_image", { source: "media/source.png", prompt: "add a red fox" }),
            toolStep("edit_image", { source: "media/nope.png", prompt: "x" }),
            "/text done"
          ].join("\n")
        )
        const calls = callIdsOf(parsed.chunks)
        const [image, copied] = outputsOf(parsed.chunks)
        const { images } = Schema.decodeUnknownSync(Schema.Struct({
          images: Schema.Array(Schema.Struct({ path: Schema.String }))
        }))(image)
        assert.deepStrictEqual(images.map((i) => i.path), [`media/image-${calls[0].slice(-8)}.png`])
        // The PNG's signature, read back inside the sandbox.
        assert.include(JSON.stringify(copied), "89 50 4e 47 0d 0a 1a 0a")
        // The workspace file went to /images/edits as the image; a path the workspace lacks is a failure the model reads.
        assert.deepStrictEqual(failureTextsOf(parsed.chunks), [
          "media_source_unavailable: source 'media/nope.png' cannot be read: no such file: media/nope.png"
        ])
        const { recorder } = yield* Peers
        const edit = recorder.requests().filter((r) => r.path === "/v1/images/edits").slice(before)
        assert.strictEqual(edit.length, 1)
        const form = yield* Effect.promise(() =>
          new Response(edit[0].body, { headers: { "content-type": edit[0].contentType } }).formData()
        )
        const source = form.get("image")
        assert.isTrue(source instanceof File)
        if (source instanceof File) {
          assert.strictEqual(source.name, "source.png")
          assert.strictEqual(source.type, "image/png")
          assert.deepStrictEqual(Buffer.from(yield* Effect.promise(() => source.arrayBuffer())), png)
        }
      }),
    60_000
  )

  it.effect("a provider's refusal is a failure the model reads, in the provider's words; nothing is billed", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { media: { image: true } } })
      const { parsed, runId } = yield* send(
        thread.id,
        `${toolStep("generate_image", { prompt: "a forbidden scene" })}\n/text done`
      )
      assert.deepStrictEqual(failureTextsOf(parsed.chunks), [
        "media_provider_error: openai:gpt-image-1 answered HTTP 400: Your request was rejected by the safety system."
      ])
      const run = yield* getRun(runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.usage?.costCents, 0)
      assert.isUndefined(run.usage?.mediaGenerations)
    }))

  it.effect("a handler that fails fails that export visibly (the native handle kept), not the run", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const { handler } = yield* createHandler()
      yield* server.answerWith(HookServer.reply(500, { error: "down" }))
      const { thread } = yield* agentWithThread({
        capabilities: { media: { soundEffect: true } },
        artifacts: { exports: { resultHandlerId: handler.id } }
      })
      const { parsed, runId } = yield* send(
        thread.id,
        `${toolStep("generate_sound_effect", { text: "door creak", durationSeconds: 2 })}\n/text done`
      )
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      const output = Schema.decodeUnknownSync(Schema.Struct({
        costCents: Schema.Number,
        artifact: Schema.Struct({ ref: Schema.Struct({ kind: Schema.Literal("svc"), id: Schema.String }) }),
        exportFailed: Schema.Struct({ code: Schema.String, message: Schema.String })
      }))(outputsOf(parsed.chunks)[0])
      assert.strictEqual(output.costCents, 0.4)
      assert.strictEqual(output.exportFailed.code, "service_unavailable")
      assert.isTrue(
        output.exportFailed.message.startsWith("the file could not be delivered to the agent's artifact handler: "),
        output.exportFailed.message
      )
      assert.strictEqual(textOf(parsed.message), "done")
    }))

  it.effect("a video job is created, polled every 5 s of the run's clock (progress on the stream) and downloaded", () =>
    Effect.gen(function*() {
      const { mockUrl, recorder } = yield* Peers
      const { thread } = yield* agentWithThread({ capabilities: { media: { video: true } } })
      const receipt = yield* startRun(thread.id, {
        input: `${toolStep("generate_video", { prompt: "a fox running" })}\n/text done`,
        streamProgress: true
      })
      const streamPath = `/v1/runs/${receipt.runId}/stream`
      // Created: said on the stream, then a poll after 5 s (still processing).
      yield* chunksUntil(streamPath, (chunks) => videoProgress(chunks).length >= 1)
      assert.deepStrictEqual(
        recorder.requests().filter((r) => r.path.startsWith("/v1/videos")).map((r) => `${r.method} ${r.path}`),
        ["POST /v1/videos"]
      )
      yield* TestClock.adjust("5 seconds")
      yield* chunksUntil(streamPath, (chunks) => videoProgress(chunks).length >= 2)
      // The provider finishes the job; the next poll finds it completed and the video is downloaded.
      const finished = yield* Effect.promise(() =>
        fetch(`${mockUrl}/v1/videos`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "sora-2", prompt: "finish the fox" })
        })
      )
      assert.strictEqual(finished.status, 200)
      yield* TestClock.adjust("5 seconds")
      const stream = yield* streamOf(receipt.runId)
      assert.deepStrictEqual(
        recorder.requests().filter((r) => r.path.startsWith("/v1/videos")).map((r) => `${r.method} ${r.path}`),
        ["POST /v1/videos", "GET /v1/videos/video_poll", "GET /v1/videos/video_poll"]
      )
      assert.deepStrictEqual(yield* sentTo("/v1/videos"), [{ model: "sora-2", prompt: "a fox running", seconds: "4" }])
      assert.deepStrictEqual(videoProgress(stream.chunks), [
        "Generating a video: processing",
        "Generating a video: processing",
        "Generating a video: completed"
      ])
      const output = Schema.decodeUnknownSync(Schema.Struct({
        jobId: Schema.String,
        seconds: Schema.Number,
        mediaType: Schema.String,
        sha256: Schema.String,
        costCents: Schema.Number
      }))(outputsOf(stream.chunks)[0])
      assert.deepStrictEqual(output, {
        jobId: "video_poll",
        seconds: 4,
        mediaType: "video/mp4",
        sha256: sha(videoBytes),
        costCents: 40
      })
      assert.strictEqual((yield* getRun(receipt.runId)).status, "completed")
    }))

  it.effect("a run cancelled while its video job runs cancels the job (DELETE)", () =>
    Effect.gen(function*() {
      const { recorder } = yield* Peers
      const { thread } = yield* agentWithThread({ capabilities: { media: { video: true } } })
      const receipt = yield* startRun(thread.id, {
        input: `${toolStep("generate_video", { prompt: "a slow sunset", seconds: 8 })}\n/text done`,
        streamProgress: true
      })
      yield* chunksUntil(`/v1/runs/${receipt.runId}/stream`, (chunks) => videoProgress(chunks).length >= 1)
      const cancelled = yield* request("POST", `/v1/runs/${receipt.runId}/cancel`)
      assert.strictEqual(cancelled.status, 200, cancelled.text)
      const deleted = yield* recorder.awaitRequest((r) => r.method === "DELETE")
      assert.strictEqual(deleted.path, "/v1/videos/video_cancel")
      assert.strictEqual((yield* getRun(receipt.runId)).status, "cancelled")
    }))

  it.effect("a budget stops the run between two images: the second is never asked for", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { media: { image: true } } })
      const before = (yield* sentTo("/v1/images/generations")).length
      const fox = toolStep("generate_image", { prompt: "a red fox" })
      const receipt = yield* startRun(thread.id, { input: `${fox}\n${fox}\n/text done`, budgetCents: 4 })
      const stream = yield* streamOf(receipt.runId)
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.terminalReason, "budget_exceeded")
      assert.strictEqual((yield* sentTo("/v1/images/generations")).length - before, 1)
      const usage = Schema.decodeUnknownSync(Usage)(firstDataOf(stream.chunks, "data-svc-usage"))
      assert.strictEqual(usage.costCents, 4)
      assert.strictEqual(usage.mediaGenerations?.length, 1)

      // A call that would pass what is left is refused before the provider is asked.
      const two = yield* startRun(thread.id, {
        input: `${toolStep("generate_image", { prompt: "a red fox", count: 2 })}\n/text done`,
        budgetCents: 6
      })
      const refused = yield* streamOf(two.runId)
      assert.deepStrictEqual(failureTextsOf(refused.chunks), [
        "budget_exceeded: 2 images on openai:gpt-image-1 would cost 8 cents and the run's cost limits leave 6; nothing was generated."
      ])
      assert.strictEqual((yield* sentTo("/v1/images/generations")).length - before, 1)
    }))

  it.effect("a generation approved after a park is billed: its line is in the receipt", () =>
    Effect.gen(function*() {
      const server = yield* HookServer.HookServer
      const hook = yield* Collection.toolApprovalHooks.create({
        name: Collection.uniqueName("media-review"),
        url: `${server.origin}/review`,
        secret: "whsec_media_review_secret"
      })
      yield* server.answerWith(HookServer.reply(200, { decision: "pause" }))
      const { thread } = yield* agentWithThread({
        capabilities: { media: { image: true } },
        approvals: { toolExecution: { hookId: hook.id } }
      })
      const { runId } = yield* send(thread.id, `${toolStep("generate_image", { prompt: "a red fox" })}\n/text done`)
      assert.strictEqual((yield* getRun(runId)).status, "waiting_for_approval")
      assert.strictEqual((yield* approveAll(runId)).length, 1)
      const stream = yield* streamOf(runId)
      const usage = Schema.decodeUnknownSync(Usage)(firstDataOf(stream.chunks, "data-svc-usage"))
      assert.strictEqual(usage.costCents, 4)
      assert.strictEqual(usage.mediaGenerations?.length, 1)
      const run = yield* getRun(runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.usage?.costCents, 4)
    }))

  it.effect("an unpriced media route under a cost limit fails the run before inference (pricing_unavailable)", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { media: { music: true } } })
      const receipt = yield* startRun(thread.id, { input: "/text hi", budgetCents: 100 })
      yield* streamOf(receipt.runId)
      const run = yield* getRun(receipt.runId)
      assert.strictEqual(run.status, "failed")
      assert.strictEqual(run.terminalReason, "pricing_unavailable")
      assert.strictEqual(
        run.error?.message,
        "Media route 'elevenlabs:music_v1' (music) has no price (SVC_MEDIA_PRICES), so budgetCents 100 cannot be enforced; the run failed before inference and nothing was billed."
      )
    }))

  it.effect("GET /v1/bands shows the deployment's media kinds", () =>
    Effect.gen(function*() {
      const reply = yield* request("GET", "/v1/bands")
      assert.deepStrictEqual(Schema.decodeUnknownSync(Schema.Struct({ media: Schema.Unknown }))(reply.json).media, {
        image: { route: "openai:gpt-image-1", unit: "image", centsPerUnit: 4, strict: false },
        video: { route: "openai:sora-2", unit: "second", centsPerUnit: 10, strict: false },
        speech: { route: "openai:gpt-4o-mini-tts", unit: "1k_characters", centsPerUnit: 1.5, strict: false },
        music: { route: "elevenlabs:music_v1", unit: "second", centsPerUnit: null, strict: false },
        soundEffect: { route: "elevenlabs:eleven_text_to_sound_v2", unit: "second", centsPerUnit: 0.2, strict: false }
      })
    }))
})

TestServer.suite({
  media: { ...mediaAt("http://127.0.0.1:9"), routes: { ...mediaAt("").routes, video: null } }
})("media generation on a deployment without video", (it) => {
  it.effect("a kind the deployment lacks is 400 media_runtime_unconfigured naming it, on create and validate", () =>
    Effect.gen(function*() {
      for (const path of ["/v1/agents", "/v1/agents/validate"]) {
        const refused = yield* expectError(
          yield* request("POST", path, { body: { capabilities: { media: { image: true, video: true } } } }),
          400,
          "invalid_request_error",
          "media_runtime_unconfigured"
        )
        assert.strictEqual(
          refused.message,
          "Media kind 'video' is not configured on this deployment (see GET /v1/bands media)."
        )
        assert.deepStrictEqual(refused.details, { field: "capabilities.media.video" })
      }
      // A strict thread: its runs are refused the kinds whose routes are not strict-capable.
      const strict = yield* agentWithThread({ capabilities: { media: { image: true } } }, { dataHandling: "strict" })
      const refusedRun = yield* expectError(
        yield* request("POST", `/v1/threads/${strict.thread.id}/messages`, { body: { input: "hi" } }),
        400,
        "invalid_request_error",
        "strict_data_handling_unavailable"
      )
      assert.strictEqual(
        refusedRun.message,
        "Strict data handling is required but this deployment's image route (openai:gpt-image-1) is not marked strict-capable (SVC_MEDIA_STRICT)."
      )
      assert.deepStrictEqual(refusedRun.details, { field: "dataHandling" })
      // media: true takes the kinds the deployment has, and their tools only.
      const { thread } = yield* agentWithThread({ capabilities: { media: true } })
      const { parsed } = yield* send(thread.id, "/show-tools")
      const names = Schema.decodeUnknownSync(
        Schema.fromJsonString(Schema.Array(Schema.Struct({ name: Schema.String })))
      )(
        textOf(parsed.message)
      ).map((t) => t.name).filter((n) => n.startsWith("generate_") || n === "edit_image")
      assert.deepStrictEqual(names, [
        "generate_image",
        "edit_image",
        "generate_speech",
        "generate_music",
        "generate_sound_effect"
      ])
    }))
})

/**
 * An agent with `web: true` and `mediaView` answers a question in one run by
 * searching (a SearXNG-shaped provider), fetching the page it found (which
 * hands its picture to view_media) and looking at the picture: on the
 * scripted model, and on aimock on both provider shapes, where the step after
 * the view carries the picture as OpenAI `image_url` parts or as an Anthropic
 * `image` block inside the tool_result. On aimock too: `analysis` asks the
 * run's own route and meters its tokens, and audio is transcribed through
 * the OpenAI-compatible `/audio/transcriptions`.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Interaction } from "../../domain/Interaction.ts"
import { analysisSystem } from "../../src/media/view/VisionAnalysis.ts"
import { type Aimock, aimock, type RecordingProxy, recordingProxy, redactedKey } from "../support/Aimock.ts"
import * as Collection from "../support/Collection.ts"
import {
  agentWithThread,
  failureTextsOf,
  getRun,
  outputsOf,
  send,
  streamOf,
  textOf,
  toolStep
} from "../support/Conversation.ts"
import { HookServer, reply } from "../support/HookServer.ts"
import { listen } from "../support/HttpPeer.ts"
import { pendingOf } from "../support/Interactions.ts"
import { png, tone } from "../support/MediaFixtures.ts"
import * as TestServer from "../support/TestServer.ts"

interface World {
  readonly base: string
  readonly red: Uint8Array
  readonly peer: Aimock
  readonly proxy: RecordingProxy
}
class Peers extends Context.Service<Peers, World>()("test/MediaViewPeers") {}

const page = (base: string) =>
  `<!doctype html><html><head><title>The island ferry</title></head><body><nav><a href="/">Home</a></nav>
<main><h1>The island ferry</h1><p>${"Our ferry crosses to the island every hour. ".repeat(8)}</p>
<img src="/ferry.png" alt="The ferry"><p>Photo: ${base}/ferry.png</p></main></body></html>`

/** The search provider, the page and its picture, on one local site. */
const site = (base: () => string, red: Uint8Array, wav: Uint8Array) => (req: IncomingMessage, res: ServerResponse) => {
  const url = new URL(req.url ?? "/", "http://site")
  const send = (type: string, body: string | Uint8Array) => res.writeHead(200, { "content-type": type }).end(body)
  switch (url.pathname) {
    case "/search":
      return send(
        "application/json",
        JSON.stringify({
          results: [{ title: "The island ferry", url: `${base()}/ferry`, content: "Our ferry crosses every hour." }]
        })
      )
    case "/ferry":
      return send("text/html", page(base()))
    case "/ferry.png":
      return send("image/png", red)
    case "/welcome.wav":
      return send("audio/wav", wav)
    default:
      return res.writeHead(404).end()
  }
}

const searchInput = { query: "island ferry colour", maxResults: 1 }

/** The three tool steps of one provider's run, then the answer once the picture was seen. */
const fixturesFor =
  (base: string, question: string, ids: readonly [string, string, string]) => (mock: Aimock["mock"]) => {
    const [search, fetch, look] = ids
    mock.on({ predicate: (req) => JSON.stringify(req.messages).includes(look) }, { content: "The ferry is red." })
    mock.on({ userMessage: question, hasToolResult: false }, {
      toolCalls: [{ id: search, name: "web_search", arguments: JSON.stringify(searchInput) }]
    })
    mock.onToolResult(search, {
      toolCalls: [{ id: fetch, name: "web_fetch", arguments: JSON.stringify({ url: `${base}/ferry` }) }]
    })
    mock.onToolResult(fetch, {
      toolCalls: [{ id: look, name: "view_media", arguments: JSON.stringify({ source: `${base}/ferry.png` }) }]
    })
  }

const World = Layer.unwrap(Effect.gen(function*() {
  const red = yield* png("red", 64, 48)
  const wav = yield* tone(1)
  let base = ""
  const port = yield* listen(site(() => base, red, wav))
  base = `http://127.0.0.1:${port}`
  const peer = yield* aimock((mock) => {
    fixturesFor(base, "What colour is the ferry (openai)?", ["call_s1", "call_f1", "call_m1"])(mock)
    fixturesFor(base, "What colour is the ferry (anthropic)?", ["toolu_s2", "toolu_f2", "toolu_m2"])(mock)
    // analysis: the step's call, the vision call of the same route, the answer after it.
    mock.on({ userMessage: "Ask about the picture", hasToolResult: false }, {
      toolCalls: [{
        id: "call_a1",
        name: "view_media",
        arguments: JSON.stringify({ source: `${base}/ferry.png`, question: "What colour is the hull?" })
      }],
      usage: { prompt_tokens: 10, completion_tokens: 3 }
    })
    mock.on({ userMessage: "Question: What colour is the hull?" }, {
      content: "The hull is red.",
      usage: { prompt_tokens: 100, completion_tokens: 5 }
    })
    mock.onToolResult("call_a1", { content: "Red, it says.", usage: { prompt_tokens: 20, completion_tokens: 4 } })
    // The same after a person approved the call: the resumed step's analysis is metered too.
    mock.on({ userMessage: "Ask after approval", hasToolResult: false }, {
      toolCalls: [{
        id: "call_p1",
        name: "view_media",
        arguments: JSON.stringify({ source: `${base}/ferry.png`, question: "Is the hull red?" })
      }],
      usage: { prompt_tokens: 10, completion_tokens: 3 }
    })
    mock.on({ userMessage: "Question: Is the hull red?" }, {
      content: "Yes, red.",
      usage: { prompt_tokens: 100, completion_tokens: 5 }
    })
    mock.onToolResult("call_p1", { content: "Red, once approved.", usage: { prompt_tokens: 20, completion_tokens: 4 } })
    mock.on({ userMessage: "Listen to the greeting", hasToolResult: false }, {
      toolCalls: [{ id: "call_t1", name: "view_media", arguments: JSON.stringify({ source: `${base}/welcome.wav` }) }]
    })
    mock.onToolResult("call_t1", { content: "It says welcome aboard." })
    mock.onTranscription({ transcription: { text: "Welcome aboard the island ferry." } })
  })
  const proxy = yield* recordingProxy(peer.url)
  return Layer.mergeAll(
    TestServer.layer({
      bands: {
        lite: { route: "scripted", strict: true },
        core: { route: "openai:gpt-test", strict: false },
        frontier: { route: "anthropic:claude-test", strict: false }
      },
      routePrices: "openai:gpt-test=1/2;anthropic:claude-test=3/15",
      // OpenAI's requests are read from aimock's journal as sent; Anthropic's through the proxy (aimock translates them).
      openai: { baseUrl: `${peer.url}/v1`, apiKey: Option.some(redactedKey) },
      anthropic: { baseUrl: `${proxy.url}/v1`, apiKey: Option.some(redactedKey) },
      webSearch: Option.some({ provider: "searxng", baseUrl: base, apiKey: Option.none(), strictCapable: true })
    }),
    Layer.succeed(Peers)({ base, red, peer, proxy }),
    HookServer.layer
  )
}))

const agentBody = (band: string, output: "auto" | "analysis" = "auto") => ({
  band,
  capabilities: { web: true, mediaView: { output } }
})

const Viewed = Schema.Struct({ shown: Schema.String, images: Schema.Array(Schema.String) })

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

layer(World, { timeout: TestServer.setupTimeout })("web and view_media in one run", (it) => {
  it.effect("the scripted model: searches, fetches the page, is handed its picture and looks at it", () =>
    Effect.gen(function*() {
      const { base, red } = yield* Peers
      const { thread } = yield* agentWithThread(agentBody("lite"))
      const { parsed, runId } = yield* send(
        thread.id,
        [
          toolStep("web_search", searchInput),
          toolStep("web_fetch", { url: `${base}/ferry` }),
          toolStep("web_fetch", { url: `${base}/ferry.png` }),
          toolStep("view_media", { source: `${base}/ferry.png` }),
          "/text The ferry is red."
        ].join("\n")
      )
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      assert.deepStrictEqual(failureTextsOf(parsed.chunks), [])
      const [found, read, handed, viewed] = outputsOf(parsed.chunks)
      assert.deepStrictEqual(
        Schema.decodeUnknownSync(Schema.Struct({ results: Schema.Array(Schema.Struct({ url: Schema.String })) }))(found)
          .results.map((r) => r.url),
        [`${base}/ferry`]
      )
      assert.include(
        Schema.decodeUnknownSync(Schema.Struct({ content: Schema.String }))(read).content,
        `${base}/ferry.png`
      )
      assert.deepStrictEqual(handed, {
        url: `${base}/ferry.png`,
        status: 200,
        contentType: "image/png",
        bytes: red.byteLength,
        viewWith: { tool: "view_media", source: `${base}/ferry.png` }
      })
      assert.strictEqual(
        Schema.decodeUnknownSync(Viewed)(viewed).shown,
        `the image ferry.png (image/png, ${red.byteLength} bytes)`
      )
      assert.strictEqual(textOf(parsed.message), "The ferry is red.")
    }))

  it.effect("aimock, OpenAI-compatible: the step after the view carries the picture as image_url parts", () =>
    Effect.gen(function*() {
      const { peer, red } = yield* Peers
      const { thread } = yield* agentWithThread(agentBody("core"))
      const { parsed, runId } = yield* send(thread.id, "What colour is the ferry (openai)?")
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      assert.deepStrictEqual(failureTextsOf(parsed.chunks), [])
      const steps = (yield* peer.journal).filter((e) =>
        e.path === "/v1/chat/completions" && JSON.stringify(e.body).includes("call_s1")
      )
      assert.strictEqual(steps.length, 3)
      const last = (steps[2].body as { readonly messages: ReadonlyArray<unknown> }).messages.slice(-3)
      const viewed = Schema.decodeUnknownSync(Viewed)(outputsOf(parsed.chunks)[2])
      assert.deepStrictEqual(last.slice(1), [
        {
          role: "tool",
          tool_call_id: "call_m1",
          content:
            `<untrusted_data source="view_media">\nViewed the image ferry.png (image/png, ${red.byteLength} bytes); stored as ${
              viewed.images[0]
            }.\nThe images follow: ${viewed.images[0]} (the image).\n</untrusted_data>`
        },
        {
          role: "user",
          content: [
            { type: "text", text: "The images of the view_media result of call call_m1:" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${b64(red)}` } }
          ]
        }
      ])
      assert.strictEqual(textOf(parsed.message), "The ferry is red.")
    }))

  it.effect("aimock, Anthropic: the picture is an image block inside the view's tool_result", () =>
    Effect.gen(function*() {
      const { proxy, red } = yield* Peers
      const { thread } = yield* agentWithThread(agentBody("frontier"))
      const { parsed, runId } = yield* send(thread.id, "What colour is the ferry (anthropic)?")
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      const steps = proxy.requests().filter((r) => JSON.stringify(r.body).includes("toolu_s2"))
      assert.strictEqual(steps.length, 3)
      const messages = (steps[2].body as {
        readonly messages: ReadonlyArray<{ readonly content: ReadonlyArray<Record<string, unknown>> }>
      }).messages
      const result = messages.at(-1)?.content.at(-1)
      assert.strictEqual(result?.["type"], "tool_result")
      assert.strictEqual(result?.["tool_use_id"], "toolu_m2")
      const content = result?.["content"] as ReadonlyArray<unknown>
      assert.strictEqual(content.length, 2)
      assert.deepStrictEqual(content[1], {
        type: "image",
        source: { type: "base64", media_type: "image/png", data: b64(red) }
      })
      assert.strictEqual(textOf(parsed.message), "The ferry is red.")
    }))

  it.effect("aimock, analysis: the run's own route answers, only the answer returns, its tokens are the run's", () =>
    Effect.gen(function*() {
      const { peer, red } = yield* Peers
      const { thread } = yield* agentWithThread(agentBody("core", "analysis"))
      const { parsed, runId } = yield* send(thread.id, "Ask about the picture")
      const run = yield* getRun(runId)
      assert.strictEqual(run.status, "completed")
      const answer = Schema.decodeUnknownSync(Schema.Struct({ answer: Schema.String }))(outputsOf(parsed.chunks)[0])
      assert.strictEqual(answer.answer, "The hull is red.")
      const vision = (yield* peer.journal).filter((e) => JSON.stringify(e.body).includes(analysisSystem))
      assert.strictEqual(vision.length, 1)
      const visionMessages = (vision[0].body as { readonly messages: ReadonlyArray<{ readonly content: unknown }> })
        .messages
      assert.deepStrictEqual(
        (visionMessages[1].content as ReadonlyArray<{ readonly type: string }>).map((p) => p.type),
        ["text", "text", "image_url"]
      )
      assert.include(JSON.stringify(visionMessages[1].content), b64(red))
      // The step after the call reads the answer, never the picture.
      const after = (yield* peer.journal).filter((e) => JSON.stringify(e.body).includes("\"call_a1\""))
      assert.notInclude(JSON.stringify(after.at(-1)?.body), "image_url")
      assert.deepStrictEqual([run.usage?.inputTokens, run.usage?.outputTokens, run.usage?.steps], [130, 12, 2])
      assert.strictEqual(textOf(parsed.message), "Red, it says.")
    }))

  it.effect("aimock, analysis after an approval: the resumed call's analysis is metered as the run's", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "reviewer",
        url: `${hooks.origin}/review`,
        secret: "whsec_media_view_test"
      })
      const { thread } = yield* agentWithThread({
        ...agentBody("core", "analysis"),
        approvals: { toolExecution: { hookId: hook.id } }
      })
      yield* hooks.answerWith(reply(200, { decision: "pause", reason: "A person looks first." }))
      const first = yield* send(thread.id, "Ask after approval")
      assert.strictEqual((yield* getRun(first.runId)).status, "waiting_for_approval")
      const [pending] = yield* pendingOf(first.runId)
      yield* TestServer.expectOk(
        yield* TestServer.request("POST", `/v1/interactions/${pending.id}/resolve`, {
          body: { inputResponses: [{ requestId: pending.id, optionId: "approve" }] }
        }),
        200,
        Interaction
      )
      const resumed = yield* streamOf(first.runId)
      assert.strictEqual(textOf(resumed.message), "Red, once approved.")
      const run = yield* getRun(first.runId)
      assert.strictEqual(run.status, "completed")
      assert.deepStrictEqual([run.usage?.inputTokens, run.usage?.outputTokens, run.usage?.steps], [130, 12, 2])
    }))

  it.effect("aimock, audio: transcribed through the OpenAI-compatible transcription endpoint", () =>
    Effect.gen(function*() {
      const { peer } = yield* Peers
      const { thread } = yield* agentWithThread(agentBody("core"))
      const { parsed } = yield* send(thread.id, "Listen to the greeting")
      const heard = Schema.decodeUnknownSync(Schema.Struct({ transcript: Schema.String, shown: Schema.String }))(
        outputsOf(parsed.chunks)[0]
      )
      assert.strictEqual(heard.transcript, "Welcome aboard the island ferry.")
      assert.strictEqual(heard.shown, "the audio welcome.wav (1.0 s), transcribed")
      const asked = (yield* peer.journal).filter((e) => e.path === "/v1/audio/transcriptions")
      assert.deepStrictEqual(asked.map((e) => e.response.status), [200])
      assert.strictEqual(textOf(parsed.message), "It says welcome aboard.")
    }))
})

/**
 * Prompt-cache reads as both providers report them (OpenAI's
 * `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`)
 * reach the step's Finish as `cachedInputTokens`, within the input count, so
 * that they are priced at the cached-input rate. aimock does not emit these
 * fields, so the peer here is a plain HTTP server answering the providers'
 * documented stream.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { makeAnthropicModel } from "../../../src/model/AnthropicModel.ts"
import type { ModelProvider } from "../../../src/model/ModelProvider.ts"
import { makeOpenAiModel } from "../../../src/model/OpenAiModel.ts"
import { redactedKey } from "../../support/Aimock.ts"
import { listen } from "../../support/HttpPeer.ts"

const sse = (events: ReadonlyArray<readonly [string | null, unknown]>) =>
  events.map(([event, data]) =>
    `${event === null ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`
  ).join("")

const openAiStream = sse([
  [null, { id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "Hi" } }] }],
  [null, { id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }],
  [null, {
    id: "c1",
    object: "chat.completion.chunk",
    choices: [],
    usage: { prompt_tokens: 1200, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 1024 } }
  }],
  [null, "[DONE]"]
])

const anthropicStream = sse([
  ["message_start", {
    type: "message_start",
    message: {
      usage: { input_tokens: 176, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024, output_tokens: 1 }
    }
  }],
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } }],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 5 } }],
  ["message_stop", { type: "message_stop" }]
])

/** A provider endpoint that answers every request with `body` as an event stream. */
const peer = (body: string) =>
  listen((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.end(body)
    })
  })

const cases: ReadonlyArray<readonly [string, string, (baseUrl: string) => ModelProvider]> = [
  ["openai", openAiStream, (baseUrl) => makeOpenAiModel({ model: "gpt-4.1", baseUrl, apiKey: redactedKey })],
  [
    "anthropic",
    anthropicStream,
    (baseUrl) => makeAnthropicModel({ model: "claude-sonnet-4-5", baseUrl, apiKey: redactedKey })
  ]
]

describe("cached input", () => {
  it.effect.each(cases)(
    "%s: cache reads are counted in the input and reported as cachedInputTokens",
    ([, body, make]) =>
      Effect.gen(function*() {
        const port = yield* peer(body)
        const events = yield* Stream.runCollect(
          make(`http://127.0.0.1:${port}/v1`).stream({
            system: "",
            messages: [{ role: "user", content: "hello" }],
            tools: [],
            outputSchema: undefined
          })
        )
        assert.deepStrictEqual(events, [
          { _tag: "TextDelta", text: "Hi" },
          { _tag: "Finish", reason: "stop", inputTokens: 1200, outputTokens: 5, cachedInputTokens: 1024 }
        ])
      }).pipe(Effect.scoped)
  )
})

/**
 * The `anthropic:<model>` provider against aimock over real HTTP: streamed
 * thinking, text and tool calls, and its retries on the test clock. aimock
 * journals Messages requests already translated to the OpenAI shape (and
 * redacts the key), so the raw wire shape is read from a recording proxy in
 * front of it, and the journal shows how aimock understood the request.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import type { Message, ToolSpec } from "../../../domain/Conversation.ts"
import { ToolCallId } from "../../../domain/Ids.ts"
import { anthropicSchema, makeAnthropicModel } from "../../../src/model/AnthropicModel.ts"
import type { ModelEvent, ModelRequest } from "../../../src/model/ModelProvider.ts"
import { aimock, apiKey, recordingProxy, redactedKey, sleepProbe } from "../../support/Aimock.ts"

const weatherTool: ToolSpec = {
  name: "get_weather",
  description: "Current weather for a city.",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer" } },
    required: ["city"]
  }
}

const request = (messages: ReadonlyArray<Message>, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  system: "You are terse.",
  messages,
  tools: [],
  outputSchema: undefined,
  ...extra
})
const ask = (text: string, extra: Partial<ModelRequest> = {}) => request([{ role: "user", content: text }], extra)

const text = (events: ReadonlyArray<ModelEvent>) =>
  events.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")

describe("AnthropicModel", () => {
  it.effect("streams thinking as ReasoningDelta and text as TextDelta, then Finish('stop') with the reported usage", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) =>
        mock.onMessage("hello", {
          content: "Hello, human.",
          reasoning: "Greet back.",
          usage: { input_tokens: 25, output_tokens: 7 }
        })
      )
      const proxy = yield* recordingProxy(peer.url)
      const model = makeAnthropicModel({ model: "claude-sonnet-4-5", baseUrl: `${proxy.url}/v1`, apiKey: redactedKey })
      assert.strictEqual(model.route, "anthropic:claude-sonnet-4-5")

      const events = yield* Stream.runCollect(model.stream(ask("hello")))
      assert.deepStrictEqual(events, [
        { _tag: "ReasoningDelta", text: "Greet back." },
        { _tag: "TextDelta", text: "Hello, human." },
        { _tag: "Finish", reason: "stop", inputTokens: 25, outputTokens: 7 }
      ])

      const [sent] = proxy.requests()
      assert.strictEqual(sent.path, "/v1/messages")
      assert.strictEqual(sent.headers["x-api-key"], apiKey)
      assert.strictEqual(sent.headers["anthropic-version"], "2023-06-01")
      assert.strictEqual(sent.headers.authorization, undefined)
      assert.deepStrictEqual(sent.body, {
        model: "claude-sonnet-4-5",
        max_tokens: 8192,
        stream: true,
        system: "You are terse.",
        messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }]
      })
      const [entry] = yield* peer.journal
      assert.deepStrictEqual(entry.response.status, 200)
    }))

  it.effect("a tool_use block arrives as one ToolCall; the follow-up sends tool_use and an erroring tool_result", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => {
        mock.on({ userMessage: "weather", hasToolResult: false }, {
          toolCalls: [{ id: "toolu_01A", name: "get_weather", arguments: JSON.stringify({ city: "Paris", days: 2 }) }],
          usage: { input_tokens: 40, output_tokens: 18 }
        }, { chunkSize: 4 })
        mock.onToolResult("toolu_01A", {
          content: "The weather service is down.",
          usage: { input_tokens: 70, output_tokens: 9 }
        })
      })
      const proxy = yield* recordingProxy(peer.url)
      const model = makeAnthropicModel({ model: "claude-sonnet-4-5", baseUrl: `${proxy.url}/v1/`, apiKey: redactedKey })
      const user: Message = { role: "user", content: "What's the weather in Paris?" }

      const first = yield* Stream.runCollect(model.stream(request([user], { tools: [weatherTool] })))
      assert.deepStrictEqual(first, [
        { _tag: "ToolCall", id: "toolu_01A", name: "get_weather", input: { city: "Paris", days: 2 } },
        { _tag: "Finish", reason: "tool-calls", inputTokens: 40, outputTokens: 18 }
      ])

      const second = yield* Stream.runCollect(model.stream(request([
        user,
        {
          role: "assistant",
          content: "Let me check.",
          toolCalls: [{ id: ToolCallId.make("toolu_01A"), name: "get_weather", input: { city: "Paris", days: 2 } }]
        },
        {
          role: "tool",
          toolCallId: ToolCallId.make("toolu_01A"),
          toolName: "get_weather",
          content: "upstream timeout",
          isError: true
        }
      ], { tools: [weatherTool] })))
      assert.strictEqual(text(second), "The weather service is down.")
      assert.deepStrictEqual(second.at(-1), { _tag: "Finish", reason: "stop", inputTokens: 70, outputTokens: 9 })

      assert.deepStrictEqual(proxy.requests()[1].body, {
        model: "claude-sonnet-4-5",
        max_tokens: 8192,
        stream: true,
        system: "You are terse.",
        messages: [
          { role: "user", content: [{ type: "text", text: "What's the weather in Paris?" }] },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Let me check." },
              { type: "tool_use", id: "toolu_01A", name: "get_weather", input: { city: "Paris", days: 2 } }
            ]
          },
          {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "toolu_01A", content: "upstream timeout", is_error: true }]
          }
        ],
        tools: [{
          name: "get_weather",
          description: "Current weather for a city.",
          input_schema: weatherTool.inputSchema
        }]
      })
      // How aimock read it: the tool_use as an assistant tool call, the tool_result as its answer.
      const journal = yield* peer.journal
      assert.deepStrictEqual(journal.map((entry) => entry.response.status), [200, 200])
      const understood = (journal[1].body as { readonly messages: ReadonlyArray<unknown> }).messages
      assert.deepStrictEqual(understood.slice(1), [
        { role: "user", content: "What's the weather in Paris?" },
        {
          role: "assistant",
          content: "Let me check.",
          tool_calls: [{
            id: "toolu_01A",
            type: "function",
            function: { name: "get_weather", arguments: "{\"city\":\"Paris\",\"days\":2}" }
          }]
        },
        { role: "tool", content: "upstream timeout", tool_call_id: "toolu_01A" }
      ])
    }))

  it.effect("outputSchema is sent as output_config.format in Anthropic's schema subset; the answer streams as JSON text", () =>
    Effect.gen(function*() {
      const outputSchema = {
        type: "object",
        properties: {
          title: { type: "string", minLength: 1 },
          score: { type: "integer", minimum: 0, maximum: 10 },
          tags: { type: "array", items: { type: "string", maxLength: 20 }, minItems: 1 },
          owner: {
            oneOf: [{ type: "string", format: "email" }, { type: "object", properties: { id: { type: "string" } } }]
          }
        },
        required: ["title", "score"]
      }
      const sentSchema = {
        type: "object",
        properties: {
          title: { type: "string" },
          score: { type: "integer" },
          tags: { type: "array", items: { type: "string" } },
          owner: {
            anyOf: [
              { type: "string", format: "email" },
              { type: "object", properties: { id: { type: "string" } }, additionalProperties: false }
            ]
          }
        },
        required: ["title", "score"],
        additionalProperties: false
      }
      assert.deepStrictEqual(anthropicSchema(outputSchema), sentSchema)

      const peer = yield* aimock((mock) =>
        mock.onMessage("summarise", { content: "{\"title\":\"Weekly\",\"score\":7}" })
      )
      const proxy = yield* recordingProxy(peer.url)
      const model = makeAnthropicModel({ model: "claude-sonnet-4-5", baseUrl: `${proxy.url}/v1`, apiKey: redactedKey })

      const events = yield* Stream.runCollect(model.stream(ask("summarise the week", { outputSchema })))
      assert.strictEqual(text(events), "{\"title\":\"Weekly\",\"score\":7}")
      assert.strictEqual(events.at(-1)?._tag, "Finish")
      const body = proxy.requests()[0].body as { readonly output_config: unknown; readonly tools?: unknown }
      assert.deepStrictEqual(body.output_config, { format: { type: "json_schema", schema: sentSchema } })
      assert.strictEqual(body.tools, undefined)
    }))

  it.effect("a 429 is retried after its Retry-After, on the clock", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => {
        mock.nextRequestError(429, {
          message: "Number of request tokens has exceeded your rate limit",
          type: "rate_limit_error"
        })
        mock.onMessage("hello", { content: "Hi!", usage: { input_tokens: 5, output_tokens: 2 } })
      })
      const model = makeAnthropicModel({ model: "claude-sonnet-4-5", baseUrl: `${peer.url}/v1`, apiKey: redactedKey })
      const probe = yield* sleepProbe

      const fiber = yield* model.stream(ask("hello")).pipe(
        Stream.runCollect,
        Effect.provideService(Clock.Clock, probe.clock),
        Effect.forkChild
      )
      const backoff = yield* probe.nextSleep
      assert.strictEqual(Duration.toMillis(backoff), 1000) // aimock's Retry-After: 1
      yield* TestClock.adjust(backoff)

      assert.deepStrictEqual(yield* Fiber.join(fiber), [
        { _tag: "TextDelta", text: "Hi!" },
        { _tag: "Finish", reason: "stop", inputTokens: 5, outputTokens: 2 }
      ])
      assert.deepStrictEqual((yield* peer.journal).map((entry) => entry.response.status), [429, 200])
    }))

  it.effect("a persistently overloaded API (529) backs off exponentially, then ends in ModelUnavailable", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) =>
        mock.onMessage("hello", { error: { message: "Overloaded", type: "overloaded_error" }, status: 529 })
      )
      const model = makeAnthropicModel({ model: "claude-sonnet-4-5", baseUrl: `${peer.url}/v1`, apiKey: redactedKey })
      const probe = yield* sleepProbe

      const fiber = yield* model.stream(ask("hello")).pipe(
        Stream.runCollect,
        Effect.flip,
        Effect.provideService(Clock.Clock, probe.clock),
        Effect.forkChild
      )
      const backoffs: Array<number> = []
      for (let retry = 0; retry < 4; retry++) {
        const backoff = yield* probe.nextSleep
        backoffs.push(Duration.toMillis(backoff))
        yield* TestClock.adjust(backoff)
      }
      const error = yield* Fiber.join(fiber)
      assert.deepStrictEqual(backoffs, [200, 400, 800, 1600])
      assert.strictEqual(error._tag, "ModelUnavailable")
      assert.strictEqual(
        error.message,
        "anthropic:claude-sonnet-4-5 answered HTTP 529: overloaded_error: Overloaded (gave up after 5 attempts)"
      )
      assert.deepStrictEqual((yield* peer.journal).map((entry) => entry.response.status), [529, 529, 529, 529, 529])
    }))

  it.effect("a 400 is not retried; a stream that breaks after events fails without a retry", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => {
        mock.nextRequestError(400, { message: "max_tokens: must be at most 8192", type: "invalid_request_error" })
        // Unpaced, aimock would write and destroy in one tick and no byte would leave; 1 ms lets the first chunks out.
        mock.onMessage("long", { content: "A long answer that will not arrive whole." }, {
          chunkSize: 4,
          truncateAfterChunks: 4,
          latency: 1
        })
      })
      const model = makeAnthropicModel({ model: "claude-sonnet-4-5", baseUrl: `${peer.url}/v1`, apiKey: redactedKey })

      const bad = yield* Effect.flip(Stream.runCollect(model.stream(ask("hello"))))
      assert.strictEqual(
        bad.message,
        "anthropic:claude-sonnet-4-5 answered HTTP 400: invalid_request_error: max_tokens: must be at most 8192"
      )

      const seen: Array<ModelEvent> = []
      const broken = yield* model.stream(ask("long")).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.flip
      )
      assert.strictEqual(text(seen).length > 0, true)
      assert.strictEqual(seen.some((event) => event._tag === "Finish"), false)
      assert.match(broken.message, /^anthropic:claude-sonnet-4-5 stream broke: /)
      assert.deepStrictEqual((yield* peer.journal).map((entry) => entry.response.status), [400, 200])
    }))
})

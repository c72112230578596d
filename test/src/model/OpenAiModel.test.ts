/**
 * The `openai:<model>` provider against aimock over real HTTP: streamed text,
 * reasoning and tool calls, the wire shape of what it sends (read back from
 * aimock's request journal), and its retries on the test clock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Redacted, Stream } from "effect"
import { TestClock } from "effect/testing"
import type { Message, ToolSpec } from "../../../domain/Conversation.ts"
import { ToolCallId } from "../../../domain/Ids.ts"
import type { ModelEvent, ModelRequest } from "../../../src/model/ModelProvider.ts"
import { makeOpenAiModel } from "../../../src/model/OpenAiModel.ts"
import { aimock, redactedKey, sleepProbe } from "../../support/Aimock.ts"

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

const text = (events: ReadonlyArray<ModelEvent>, tag: "TextDelta" | "ReasoningDelta" = "TextDelta") =>
  events.flatMap((event) => (event._tag === tag ? [event.text] : [])).join("")

describe("OpenAiModel", () => {
  it.effect("streams a text answer as deltas, then Finish('stop') with the reported usage", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) =>
        mock.onMessage("hello", { content: "Hi there, friend!", usage: { prompt_tokens: 11, completion_tokens: 4 } }, {
          chunkSize: 5
        })
      )
      const model = makeOpenAiModel({ model: "gpt-4.1", baseUrl: `${peer.url}/v1`, apiKey: redactedKey })
      assert.strictEqual(model.route, "openai:gpt-4.1")

      const events = yield* Stream.runCollect(model.stream(ask("hello")))
      assert.deepStrictEqual(events, [
        { _tag: "TextDelta", text: "Hi th" },
        { _tag: "TextDelta", text: "ere, " },
        { _tag: "TextDelta", text: "frien" },
        { _tag: "TextDelta", text: "d!" },
        { _tag: "Finish", reason: "stop", inputTokens: 11, outputTokens: 4 }
      ])

      const [entry] = yield* peer.journal
      assert.strictEqual(entry.path, "/v1/chat/completions")
      assert.strictEqual(entry.response.status, 200)
      assert.strictEqual(entry.headers.authorization, "[REDACTED]") // aimock only accepts the configured key
      assert.deepStrictEqual(entry.body, {
        model: "gpt-4.1",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "system", content: "You are terse." }, { role: "user", content: "hello" }],
        _endpointType: "chat"
      })
    }))

  it.effect("a tool call arrives whole, and the follow-up carries the call and its result", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => {
        mock.on({ userMessage: "weather", hasToolResult: false }, {
          toolCalls: [{
            id: "call_abc123",
            name: "get_weather",
            arguments: JSON.stringify({ city: "Paris", days: 2 })
          }],
          usage: { prompt_tokens: 30, completion_tokens: 12 }
        }, { chunkSize: 4 })
        mock.onToolResult("call_abc123", {
          content: "Sunny, 21 °C.",
          usage: { prompt_tokens: 52, completion_tokens: 6 }
        })
      })
      const model = makeOpenAiModel({ model: "gpt-4.1", baseUrl: `${peer.url}/v1/`, apiKey: redactedKey })
      const user: Message = { role: "user", content: "What's the weather in Paris?" }

      const first = yield* Stream.runCollect(model.stream(request([user], { tools: [weatherTool] })))
      assert.deepStrictEqual(first, [
        { _tag: "ToolCall", id: "call_abc123", name: "get_weather", input: { city: "Paris", days: 2 } },
        { _tag: "Finish", reason: "tool-calls", inputTokens: 30, outputTokens: 12 }
      ])

      const second = yield* Stream.runCollect(model.stream(request([
        user,
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: ToolCallId.make("call_abc123"), name: "get_weather", input: { city: "Paris", days: 2 } }]
        },
        {
          role: "tool",
          toolCallId: ToolCallId.make("call_abc123"),
          toolName: "get_weather",
          content: "{\"temp\":21}",
          isError: false
        }
      ], { tools: [weatherTool] })))
      assert.strictEqual(text(second), "Sunny, 21 °C.")
      assert.deepStrictEqual(second.at(-1), { _tag: "Finish", reason: "stop", inputTokens: 52, outputTokens: 6 })

      const journal = yield* peer.journal
      assert.deepStrictEqual(journal.map((entry) => entry.response.status), [200, 200])
      assert.deepStrictEqual(journal[1].body, {
        model: "gpt-4.1",
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: "system", content: "You are terse." },
          { role: "user", content: "What's the weather in Paris?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{
              id: "call_abc123",
              type: "function",
              function: { name: "get_weather", arguments: "{\"city\":\"Paris\",\"days\":2}" }
            }]
          },
          { role: "tool", tool_call_id: "call_abc123", content: "{\"temp\":21}" }
        ],
        tools: [{
          type: "function",
          function: {
            name: "get_weather",
            description: "Current weather for a city.",
            parameters: weatherTool.inputSchema
          }
        }],
        _endpointType: "chat"
      })
    }))

  it.effect("outputSchema becomes a json_schema response format; the answer streams as JSON text", () =>
    Effect.gen(function*() {
      const schema = { type: "object", properties: { title: { type: "string" } }, required: ["title"] }
      const peer = yield* aimock((mock) =>
        mock.on({ userMessage: "summarise", responseFormat: "json_schema" }, {
          content: "{\"title\":\"Weekly report\"}"
        })
      )
      const model = makeOpenAiModel({ model: "gpt-4.1", baseUrl: `${peer.url}/v1`, apiKey: redactedKey })

      const events = yield* Stream.runCollect(model.stream(ask("summarise this", { outputSchema: schema })))
      assert.strictEqual(text(events), "{\"title\":\"Weekly report\"}")
      assert.strictEqual(events.at(-1)?._tag, "Finish")

      const [entry] = yield* peer.journal
      assert.deepStrictEqual(
        (entry.body as { readonly response_format: unknown }).response_format,
        { type: "json_schema", json_schema: { name: "output", schema, strict: false } }
      )
    }))

  it.effect("reasoning_content streams as ReasoningDelta; reasoning tokens are not output tokens", () =>
    Effect.gen(function*() {
      // aimock reports reasoning_tokens on its OpenRouter surface (an OpenAI-compatible endpoint).
      const peer = yield* aimock((mock) =>
        mock.onMessage("think", {
          content: "42.",
          reasoning: "Six times seven.",
          usage: { prompt_tokens: 20, completion_tokens: 15, completion_tokens_details: { reasoning_tokens: 6 } }
        })
      )
      const model = makeOpenAiModel({
        model: "deepseek/deepseek-r1",
        baseUrl: `${peer.url}/api/v1`,
        apiKey: redactedKey
      })

      const events = yield* Stream.runCollect(model.stream(ask("think hard")))
      assert.strictEqual(text(events, "ReasoningDelta"), "Six times seven.")
      assert.strictEqual(text(events), "42.")
      assert.strictEqual(
        events.findIndex((e) => e._tag === "TextDelta") > events.findIndex((e) => e._tag === "ReasoningDelta"),
        true
      )
      assert.deepStrictEqual(events.at(-1), { _tag: "Finish", reason: "stop", inputTokens: 20, outputTokens: 9 })
    }))

  it.effect("a 429 is retried after its Retry-After, on the clock", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => {
        mock.nextRequestError(429, { message: "Rate limit reached for requests", type: "rate_limit_error" })
        mock.onMessage("hello", { content: "Hi!", usage: { prompt_tokens: 3, completion_tokens: 1 } })
      })
      const model = makeOpenAiModel({ model: "gpt-4.1", baseUrl: `${peer.url}/v1`, apiKey: redactedKey })
      const probe = yield* sleepProbe

      const fiber = yield* model.stream(ask("hello")).pipe(
        Stream.runCollect,
        Effect.provideService(Clock.Clock, probe.clock),
        Effect.forkChild
      )
      const backoff = yield* probe.nextSleep
      assert.strictEqual(Duration.toMillis(backoff), 1000) // aimock's Retry-After: 1
      yield* TestClock.adjust(backoff)

      const events = yield* Fiber.join(fiber)
      assert.deepStrictEqual(events, [
        { _tag: "TextDelta", text: "Hi!" },
        { _tag: "Finish", reason: "stop", inputTokens: 3, outputTokens: 1 }
      ])
      assert.deepStrictEqual((yield* peer.journal).map((entry) => entry.response.status), [429, 200])
    }))

  it.effect("persistent 500s back off exponentially, then end in ModelUnavailable naming the status and message", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) =>
        mock.onMessage("hello", { error: { message: "The server had an error", type: "server_error" }, status: 500 })
      )
      const model = makeOpenAiModel({ model: "gpt-4.1", baseUrl: `${peer.url}/v1`, apiKey: redactedKey })
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
        "openai:gpt-4.1 answered HTTP 500: server_error: The server had an error (gave up after 5 attempts)"
      )
      assert.deepStrictEqual((yield* peer.journal).map((entry) => entry.response.status), [500, 500, 500, 500, 500])
    }))

  it.effect("a 400 and a refused key are not retried", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => {
        mock.nextRequestError(400, { message: "Invalid value for 'messages'", type: "invalid_request_error" })
        mock.onMessage("hello", { content: "Hi!" })
      })
      const model = makeOpenAiModel({ model: "gpt-4.1", baseUrl: `${peer.url}/v1`, apiKey: redactedKey })

      const bad = yield* Effect.flip(Stream.runCollect(model.stream(ask("hello"))))
      assert.strictEqual(
        bad.message,
        "openai:gpt-4.1 answered HTTP 400: invalid_request_error: Invalid value for 'messages'"
      )
      assert.deepStrictEqual((yield* peer.journal).map((entry) => entry.response.status), [400])

      const stranger = makeOpenAiModel({
        model: "gpt-4.1",
        baseUrl: `${peer.url}/v1`,
        apiKey: Redacted.make("sk-wrong")
      })
      const refused = yield* Effect.flip(Stream.runCollect(stranger.stream(ask("hello"))))
      assert.match(refused.message, /^openai:gpt-4\.1 answered HTTP 401: /)
    }))

  it.effect("a provider echoing the key it was sent: the key never reaches the error's message", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => {
        mock.nextRequestError(403, {
          message: `Key Bearer ${Redacted.value(redactedKey)} may not use this model`,
          type: "permission_error"
        })
      })
      const model = makeOpenAiModel({ model: "gpt-4.1", baseUrl: `${peer.url}/v1`, apiKey: redactedKey })
      const refused = yield* Effect.flip(Stream.runCollect(model.stream(ask("hello"))))
      assert.strictEqual(
        refused.message,
        "openai:gpt-4.1 answered HTTP 403: permission_error: Key [redacted] may not use this model"
      )
    }))

  it.effect("a connection dropped before any byte is retried; a stream that breaks after events is not", () =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => {
        mock.on({ userMessage: "flaky", sequenceIndex: 0 }, { content: "never sent" }, { chaos: { disconnectRate: 1 } })
        mock.onMessage("flaky", { content: "Second time lucky." })
        // Unpaced, aimock would write and destroy in one tick and no byte would leave; 1 ms lets the first chunks out.
        mock.onMessage("long", { content: "A long answer that will not arrive whole." }, {
          chunkSize: 4,
          truncateAfterChunks: 4,
          latency: 1
        })
      })
      const model = makeOpenAiModel({ model: "gpt-4.1", baseUrl: `${peer.url}/v1`, apiKey: redactedKey })
      const probe = yield* sleepProbe

      const fiber = yield* model.stream(ask("flaky")).pipe(
        Stream.runCollect,
        Effect.provideService(Clock.Clock, probe.clock),
        Effect.forkChild
      )
      const backoff = yield* probe.nextSleep
      assert.strictEqual(Duration.toMillis(backoff), 200)
      yield* TestClock.adjust(backoff)
      assert.strictEqual(text(yield* Fiber.join(fiber)), "Second time lucky.")

      const seen: Array<ModelEvent> = []
      const broken = yield* model.stream(ask("long")).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.flip
      )
      assert.strictEqual(text(seen).length > 0, true)
      assert.strictEqual(seen.some((event) => event._tag === "Finish"), false)
      assert.match(broken.message, /^openai:gpt-4\.1 stream broke: /)
      const journal = yield* peer.journal
      assert.deepStrictEqual(
        journal.filter((entry) => entry.body !== null && JSON.stringify(entry.body).includes("long")).length,
        1
      )
    }))
})

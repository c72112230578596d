/**
 * The `openai:<model>` provider against aimock over real HTTP: streamed text,
 * reasoning and tool calls, the wire shape of what it sends (read back from
 * aimock's request journal). Its retries and refusals are ProviderRetry.test.ts's,
 * one table over both providers.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import type { Message, ToolSpec } from "../../../domain/Conversation.ts"
import { ToolCallId } from "../../../domain/Ids.ts"
import type { ModelEvent, ModelRequest } from "../../../src/model/ModelProvider.ts"
import { makeOpenAiModel } from "../../../src/model/OpenAiModel.ts"
import { aimock, redactedKey } from "../../support/Aimock.ts"

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
})

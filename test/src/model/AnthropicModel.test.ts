/**
 * The `anthropic:<model>` provider against aimock over real HTTP: streamed
 * thinking, text and tool calls (its retries and refusals are
 * ProviderRetry.test.ts's, one table over both providers). aimock journals
 * Messages requests already translated to the OpenAI shape (and redacts the
 * key), so the raw wire shape is read from a recording proxy in
 * front of it, and the journal shows how aimock understood the request.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import type { Message, ToolSpec } from "../../../domain/Conversation.ts"
import { ToolCallId } from "../../../domain/Ids.ts"
import { anthropicSchema, makeAnthropicModel } from "../../../src/model/AnthropicModel.ts"
import type { ModelEvent, ModelRequest } from "../../../src/model/ModelProvider.ts"
import { aimock, apiKey, recordingProxy, redactedKey } from "../../support/Aimock.ts"

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
})

/**
 * `anthropic:<model>`: the Anthropic Messages API (`POST {baseUrl}/messages`,
 * the base URL including `/v1`, streamed). The system prompt goes in the
 * top-level `system` field; assistant tool calls become `tool_use` blocks and
 * the tool results that follow them one user message of `tool_result` blocks
 * (with `is_error`), as the API requires.
 *
 * Structured output uses Anthropic's native mechanism,
 * `output_config: { format: { type: "json_schema", schema } }` (generally
 * available; it replaced the beta `output_format` field), not a forced
 * `output` tool: the agent loop sends `outputSchema` on every step, and a
 * forced tool would stop the model from calling the run's other tools (and
 * rules out extended thinking), while the native format constrains only the
 * final text, which then streams as ordinary text deltas. The schema is
 * first narrowed to the subset Anthropic accepts, as effect's
 * `AnthropicStructuredOutput` does: unsupported keywords dropped, `oneOf` as
 * `anyOf`, objects closed (`additionalProperties: false`). The run still
 * validates the answer against the original schema.
 *
 * Back come text deltas, reasoning deltas from `thinking` blocks (present
 * when the endpoint thinks; this provider does not ask for extended thinking,
 * since the neutral conversation cannot carry thinking signatures back),
 * tool calls assembled from their `input_json_delta` fragments, and one
 * Finish with the usage of `message_start` / `message_delta` (cache reads
 * and writes counted as input, as OpenAI's `prompt_tokens` counts them).
 */
import { type Data, Effect, Redacted, Schema, Stream } from "effect"
import type * as Sse from "effect/encoding/Sse"
import { providerCallIds } from "../../domain/Conversation.ts"
import { anthropicImage, anthropicUserBlocks } from "./AttachmentParts.ts"
import { ModelEvent, type ModelProvider, type ModelRequest, ModelUnavailable } from "./ModelProvider.ts"
import { decodeData, modelEvents, streamEvents } from "./ProviderHttp.ts"
import { inlineMedia, toolImages } from "./ToolMedia.ts"

export interface AnthropicOptions {
  readonly model: string
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted | undefined
}

const anthropicVersion = "2023-06-01"
const maxTokens = 8192

type Finish = Data.TaggedEnum.Value<ModelEvent, "Finish">
type Block = Readonly<Record<string, unknown>>
interface WireMessage {
  readonly role: "user" | "assistant"
  readonly content: Array<Block>
}

/** Consecutive user-side content (tool results, then text) must arrive as one user message. */
const toWireMessages = (request: ModelRequest): Array<WireMessage> => {
  const { files, messages } = request
  const out: Array<WireMessage> = []
  const providerId = providerCallIds(messages)
  const inline = inlineMedia(messages)
  const push = (role: WireMessage["role"], blocks: ReadonlyArray<Block>) => {
    if (blocks.length === 0) return
    const last = out.at(-1)
    if (last !== undefined && last.role === role && role === "user") last.content.push(...blocks)
    else out.push({ role, content: [...blocks] })
  }
  for (const message of messages) {
    switch (message.role) {
      case "user":
        push("user", anthropicUserBlocks(message.content, message.attachments, files))
        break
      case "assistant":
        push("assistant", [
          ...(message.content === "" ? [] : [{ type: "text", text: message.content }]),
          ...message.toolCalls.map((call) => ({
            type: "tool_use",
            id: providerId(call.id),
            name: call.name,
            input: call.input ?? {}
          }))
        ])
        break
      case "tool": {
        // A view_media result's images go inside its tool_result, after its text.
        const { shown, text } = toolImages(message, inline, files)
        push("user", [{
          type: "tool_result",
          tool_use_id: providerId(message.toolCallId),
          content: shown.length === 0
            ? text
            : [{ type: "text", text }, ...shown.map(({ bytes, ref }) => anthropicImage(ref.mediaType, bytes))],
          is_error: message.isError
        }])
        break
      }
    }
  }
  return out
}

const supportedKeywords = new Set([
  "$ref",
  "$defs",
  "definitions",
  "type",
  "title",
  "description",
  "enum",
  "const",
  "anyOf",
  "allOf",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "pattern",
  "format"
])
const formats = new Set(["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"])

const isSchemaObject = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const mapSchemas = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map((member) => (isSchemaObject(member) ? anthropicSchema(member) : member))
    : value

const mapRecord = (value: unknown): unknown =>
  isSchemaObject(value)
    ? Object.fromEntries(
      Object.entries(value).map(([name, member]) => [name, isSchemaObject(member) ? anthropicSchema(member) : member])
    )
    : value

/** The JSON Schema subset Anthropic's structured output accepts (see the module header). */
export const anthropicSchema = (schema: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    const name = key === "oneOf" ? "anyOf" : key
    if (!supportedKeywords.has(name)) continue
    if (name === "format" && !(typeof value === "string" && formats.has(value))) continue
    if (name === "properties" || name === "$defs" || name === "definitions") out[name] = mapRecord(value)
    else if (name === "anyOf" || name === "allOf") out[name] = mapSchemas(value)
    else if (name === "items") out[name] = isSchemaObject(value) ? anthropicSchema(value) : value
    else if (name !== "additionalProperties") out[name] = value
  }
  const isObject = schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object")) ||
    (schema.type === undefined && isSchemaObject(schema.properties))
  if (isObject) out.additionalProperties = false
  return out
}

const requestBody = (model: string, request: ModelRequest) => ({
  model,
  max_tokens: maxTokens,
  stream: true,
  ...(request.system === "" ? {} : { system: request.system }),
  messages: toWireMessages(request),
  ...(request.tools.length === 0 ? {} : {
    tools: request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema
    }))
  }),
  ...(request.outputSchema === undefined ? {} : {
    output_config: { format: { type: "json_schema", schema: anthropicSchema(request.outputSchema) } }
  })
})

const count = Schema.optional(Schema.NullOr(Schema.Number))
const Usage = Schema.Struct({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count
})
type Usage = typeof Usage.Type

const StreamEvent = Schema.Struct({
  type: Schema.String,
  index: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.Struct({ usage: Schema.optional(Usage) })),
  content_block: Schema.optional(Schema.Struct({
    type: Schema.String,
    id: Schema.optional(Schema.String),
    name: Schema.optional(Schema.String),
    input: Schema.optional(Schema.Unknown),
    text: Schema.optional(Schema.String),
    thinking: Schema.optional(Schema.String)
  })),
  delta: Schema.optional(Schema.Struct({
    type: Schema.optional(Schema.String),
    text: Schema.optional(Schema.String),
    thinking: Schema.optional(Schema.String),
    partial_json: Schema.optional(Schema.String),
    stop_reason: Schema.optional(Schema.NullOr(Schema.String))
  })),
  usage: Schema.optional(Usage),
  error: Schema.optional(Schema.Struct({ type: Schema.optional(Schema.String), message: Schema.String }))
})

const decodeInput = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Unknown))

const finishReason = (reason: string): Finish["reason"] => {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "tool_use":
      return "tool-calls"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    default:
      return "other"
  }
}

interface ToolBlock {
  readonly id: string
  readonly name: string
  readonly initial: unknown
  json: string
}

/** Turns the events of one message into model events; one per request (it accumulates). */
const makeDecoder = (route: string) => {
  const decodeEvent = decodeData(StreamEvent, route)
  const toolBlocks = new Map<number, ToolBlock>()
  let input = 0
  let output = 0
  let cached = 0
  let reason: string | undefined
  let finished = false

  const takeUsage = (usage: Usage | undefined) => {
    if (usage === undefined) return
    const prompt = (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) +
      (usage.cache_read_input_tokens ?? 0)
    if (usage.input_tokens != null) {
      input = prompt
      cached = usage.cache_read_input_tokens ?? 0
    }
    if (usage.output_tokens != null) output = usage.output_tokens
  }

  const toolCall = (block: ToolBlock): Effect.Effect<ModelEvent, ModelUnavailable> =>
    Effect.map(
      block.json.trim() === ""
        ? Effect.succeed(block.initial ?? {})
        : Effect.mapError(decodeInput(block.json), () =>
          new ModelUnavailable({
            message: `${route} sent input for tool ${block.name} that is not JSON: ${block.json.slice(0, 200)}`
          })),
      (value) => ModelEvent.ToolCall({ id: block.id, name: block.name, input: value })
    )

  const finish = (): ReadonlyArray<ModelEvent> => {
    finished = true
    return [
      ModelEvent.Finish({
        reason: finishReason(reason ?? "other"),
        inputTokens: input,
        outputTokens: output,
        ...(cached > 0 ? { cachedInputTokens: cached } : {})
      })
    ]
  }

  const none: ReadonlyArray<ModelEvent> = []

  const feed = (event: Sse.Event): Effect.Effect<ReadonlyArray<ModelEvent>, ModelUnavailable> =>
    Effect.flatMap(decodeEvent(event), (data): Effect.Effect<ReadonlyArray<ModelEvent>, ModelUnavailable> => {
      switch (data.type) {
        case "message_start":
          takeUsage(data.message?.usage)
          return Effect.succeed(none)
        case "content_block_start": {
          const block = data.content_block
          if (block?.type === "tool_use") {
            toolBlocks.set(data.index ?? 0, {
              id: block.id ?? "",
              name: block.name ?? "",
              initial: block.input,
              json: ""
            })
          }
          if (block?.type === "text" && block.text) return Effect.succeed([ModelEvent.TextDelta({ text: block.text })])
          if (block?.type === "thinking" && block.thinking) {
            return Effect.succeed([ModelEvent.ReasoningDelta({ text: block.thinking })])
          }
          return Effect.succeed(none)
        }
        case "content_block_delta": {
          const delta = data.delta
          if (delta?.type === "text_delta" && delta.text) {
            return Effect.succeed([ModelEvent.TextDelta({ text: delta.text })])
          }
          if (delta?.type === "thinking_delta" && delta.thinking) {
            return Effect.succeed([ModelEvent.ReasoningDelta({ text: delta.thinking })])
          }
          const block = toolBlocks.get(data.index ?? 0)
          if (delta?.type === "input_json_delta" && block !== undefined) block.json += delta.partial_json ?? ""
          return Effect.succeed(none)
        }
        case "content_block_stop": {
          const block = toolBlocks.get(data.index ?? 0)
          if (block === undefined) return Effect.succeed(none)
          toolBlocks.delete(data.index ?? 0)
          return Effect.map(toolCall(block), (call) => [call])
        }
        case "message_delta":
          if (data.delta?.stop_reason) reason = data.delta.stop_reason
          takeUsage(data.usage)
          return Effect.succeed(none)
        case "message_stop":
          return Effect.succeed(finished ? none : finish())
        case "error": {
          const error = data.error
          const detail = error === undefined ? event.data : `${error.type ? `${error.type}: ` : ""}${error.message}`
          return Effect.fail(new ModelUnavailable({ message: `${route} failed mid-stream: ${detail}` }))
        }
        default:
          // `ping` and event types newer than this decoder
          return Effect.succeed(none)
      }
    })

  const complete = Effect.suspend(() =>
    finished
      ? Effect.succeed(none)
      : Effect.fail(new ModelUnavailable({ message: `${route} ended the stream before the response was complete` }))
  )

  return { feed, complete }
}

export const makeAnthropicModel = (options: AnthropicOptions): ModelProvider => {
  const route = `anthropic:${options.model}`
  const url = `${options.baseUrl.replace(/\/+$/, "")}/messages`
  const headers: Record<string, string> = {
    "anthropic-version": anthropicVersion,
    ...(options.apiKey === undefined ? {} : { "x-api-key": Redacted.value(options.apiKey) })
  }
  return {
    route,
    stream: (request) =>
      Stream.suspend(() => {
        const decoder = makeDecoder(route)
        return modelEvents(streamEvents({ route, url, headers, body: requestBody(options.model, request) }), decoder)
      })
  }
}

/**
 * `openai:<model>`: any OpenAI-compatible Chat Completions endpoint
 * (`POST {baseUrl}/chat/completions`, streamed). The neutral conversation
 * becomes a system message followed by user / assistant (`tool_calls`) /
 * tool (`tool_call_id`) messages; `outputSchema` becomes a non-strict
 * `json_schema` response format, so the answer streams as JSON text.
 *
 * Back come text deltas, reasoning deltas (`reasoning_content`, or
 * `reasoning` as OpenRouter names it), tool calls assembled from their
 * argument fragments, and one Finish carrying the usage the endpoint reports
 * when asked (`stream_options.include_usage`), reasoning tokens excluded from
 * the output count. Endpoints that report no usage get estimates.
 */
import { type Data, Effect, Redacted, Schema, Stream } from "effect"
import type * as Sse from "effect/encoding/Sse"
import { providerCallIds } from "../../domain/Conversation.ts"
import { openAiImage, openAiUserContent } from "./AttachmentParts.ts"
import { estimateTokens, ModelEvent, type ModelProvider, type ModelRequest, ModelUnavailable } from "./ModelProvider.ts"
import { decodeData, modelEvents, streamEvents } from "./ProviderHttp.ts"
import { inlineMedia, toolImages } from "./ToolMedia.ts"

export interface OpenAiOptions {
  readonly model: string
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted | undefined
}

type Finish = Data.TaggedEnum.Value<ModelEvent, "Finish">

/**
 * Chat Completions' tool messages carry text only: the images of view_media results
 * (src/model/ToolMedia.ts) follow the step's tool messages as one user message of
 * image parts, each result's images after a line naming its call.
 */
const toWireMessages = (request: ModelRequest): Array<unknown> => {
  const { files, mediaFidelity: fidelity, messages, system } = request
  const providerId = providerCallIds(messages)
  const inline = inlineMedia(messages)
  const out: Array<unknown> = system === "" ? [] : [{ role: "system", content: system }]
  let images: Array<unknown> = []
  const flushImages = () => {
    if (images.length > 0) out.push({ role: "user", content: images })
    images = []
  }
  for (const message of messages) {
    if (message.role !== "tool") flushImages()
    switch (message.role) {
      case "user":
        out.push({ role: "user", content: openAiUserContent(message.content, message.attachments, files, fidelity) })
        break
      case "assistant":
        out.push({
          role: "assistant",
          content: message.content === "" && message.toolCalls.length > 0 ? null : message.content,
          ...(message.toolCalls.length === 0 ? {} : {
            tool_calls: message.toolCalls.map((call) => ({
              id: providerId(call.id),
              type: "function",
              function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) }
            }))
          })
        })
        break
      case "tool": {
        const { shown, text } = toolImages(message, inline, files)
        out.push({ role: "tool", tool_call_id: providerId(message.toolCallId), content: text })
        if (shown.length > 0) {
          images.push(
            {
              type: "text",
              text: `The images of the ${message.toolName} result of call ${providerId(message.toolCallId)}:`
            },
            ...shown.map(({ bytes, ref }) => openAiImage(ref.mediaType, bytes, fidelity))
          )
        }
        break
      }
    }
  }
  flushImages()
  return out
}

const requestBody = (model: string, request: ModelRequest) => ({
  model,
  stream: true,
  stream_options: { include_usage: true },
  messages: toWireMessages(request),
  ...(request.tools.length === 0 ? {} : {
    tools: request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema }
    }))
  }),
  ...(request.outputSchema === undefined ? {} : {
    response_format: {
      type: "json_schema",
      json_schema: { name: "output", schema: request.outputSchema, strict: false }
    }
  })
})

const text = Schema.optional(Schema.NullOr(Schema.String))
const count = Schema.optional(Schema.NullOr(Schema.Number))

const Chunk = Schema.Struct({
  choices: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
    delta: Schema.optional(Schema.NullOr(Schema.Struct({
      content: text,
      reasoning_content: text,
      reasoning: text,
      tool_calls: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
        index: Schema.optional(Schema.Number),
        id: text,
        function: Schema.optional(Schema.NullOr(Schema.Struct({ name: text, arguments: text })))
      }))))
    }))),
    finish_reason: text
  })))),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({
    prompt_tokens: count,
    prompt_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ cached_tokens: count }))),
    completion_tokens: count,
    completion_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ reasoning_tokens: count })))
  }))),
  /** Some compatible servers report a failure inside a 200 stream. */
  error: Schema.optional(Schema.NullOr(Schema.Struct({ message: Schema.String })))
})

const decodeArguments = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Unknown))

const finishReason = (reason: string, hasToolCalls: boolean): Finish["reason"] => {
  switch (reason) {
    case "tool_calls":
    case "function_call":
      return "tool-calls"
    case "stop":
      return hasToolCalls ? "tool-calls" : "stop"
    case "length":
      return "length"
    default:
      return "other"
  }
}

interface PendingCall {
  id: string
  name: string
  arguments: string
}

/** Turns the chunks of one completion into model events; one per request (it accumulates). */
const makeDecoder = (route: string, request: ModelRequest) => {
  const decodeChunk = decodeData(Chunk, route)
  const calls = new Map<number, PendingCall>()
  let reason: string | undefined
  let usage: { readonly input: number; readonly output: number; readonly cached: number } | undefined
  let outputText = ""
  let finished = false

  const toolCalls = Effect.suspend(() =>
    Effect.forEach(
      [...calls.entries()].sort(([a], [b]) => a - b),
      ([, call]) =>
        decodeArguments(call.arguments.trim() === "" ? "{}" : call.arguments).pipe(
          Effect.mapError(() =>
            new ModelUnavailable({
              message: `${route} sent arguments for tool ${call.name} that are not JSON: ${
                call.arguments.slice(0, 200)
              }`
            })
          ),
          Effect.map((input) => ModelEvent.ToolCall({ id: call.id, name: call.name, input }))
        )
    )
  )

  const finish = (): Finish =>
    ModelEvent.Finish({
      reason: finishReason(reason ?? "other", calls.size > 0),
      inputTokens: usage?.input ??
        estimateTokens(request.system + JSON.stringify(request.messages) + JSON.stringify(request.tools)),
      outputTokens: usage?.output ?? estimateTokens(outputText),
      ...(usage !== undefined && usage.cached > 0 ? { cachedInputTokens: usage.cached } : {})
    })

  /** Tool calls and Finish, once: at `[DONE]` or when the body ends after a finish reason. */
  const complete = Effect.suspend((): Effect.Effect<ReadonlyArray<ModelEvent>, ModelUnavailable> => {
    if (finished) return Effect.succeed([])
    finished = true
    if (reason === undefined) {
      return Effect.fail(
        new ModelUnavailable({ message: `${route} ended the stream before the response was complete` })
      )
    }
    return Effect.map(toolCalls, (events) => [...events, finish()])
  })

  const feed = (event: Sse.Event): Effect.Effect<ReadonlyArray<ModelEvent>, ModelUnavailable> => {
    if (event.data.trim() === "[DONE]") return complete
    return Effect.flatMap(decodeChunk(event), (chunk) => {
      if (chunk.error) {
        return Effect.fail(new ModelUnavailable({ message: `${route} failed mid-stream: ${chunk.error.message}` }))
      }
      const out: Array<ModelEvent> = []
      for (const choice of chunk.choices ?? []) {
        const delta = choice.delta
        const reasoning = delta?.reasoning_content ?? delta?.reasoning
        if (reasoning) out.push(ModelEvent.ReasoningDelta({ text: reasoning }))
        if (delta?.content) {
          outputText += delta.content
          out.push(ModelEvent.TextDelta({ text: delta.content }))
        }
        for (const fragment of delta?.tool_calls ?? []) {
          const index = fragment.index ?? 0
          const call = calls.get(index) ?? { id: "", name: "", arguments: "" }
          if (fragment.id) call.id = fragment.id
          if (fragment.function?.name) call.name += fragment.function.name
          if (fragment.function?.arguments) call.arguments += fragment.function.arguments
          calls.set(index, call)
        }
        if (choice.finish_reason) reason = choice.finish_reason
      }
      if (chunk.usage) {
        const reasoningTokens = chunk.usage.completion_tokens_details?.reasoning_tokens ?? 0
        usage = {
          input: chunk.usage.prompt_tokens ?? 0,
          output: Math.max(0, (chunk.usage.completion_tokens ?? 0) - reasoningTokens),
          cached: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0
        }
      }
      return Effect.succeed(out)
    })
  }

  return { feed, complete }
}

export const makeOpenAiModel = (options: OpenAiOptions): ModelProvider => {
  const route = `openai:${options.model}`
  const url = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`
  const headers: Record<string, string> = options.apiKey === undefined
    ? {}
    : { authorization: `Bearer ${Redacted.value(options.apiKey)}` }
  return {
    route,
    stream: (request) =>
      Stream.suspend(() => {
        const decoder = makeDecoder(route, request)
        return modelEvents(streamEvents({ route, url, headers, body: requestBody(options.model, request) }), decoder)
      })
  }
}

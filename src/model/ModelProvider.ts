/**
 * The contract every model route implements: one streamed model response per
 * step. Providers translate the neutral conversation to their wire format and
 * their stream back to these events; retries and errors are theirs to map.
 */
import { Data, type Stream } from "effect"
import type { Message, ToolSpec } from "../../domain/Conversation.ts"

export interface ModelRequest {
  readonly system: string
  readonly messages: ReadonlyArray<Message>
  readonly tools: ReadonlyArray<ToolSpec>
  /** JSON Schema of the structured result the final answer must satisfy. */
  readonly outputSchema: Readonly<Record<string, unknown>> | undefined
  /**
   * The bytes of the attachments in `messages` (image, document and text files), by
   * artifact id; one the store no longer has (retention) is absent and reported as such.
   */
  readonly files?: ReadonlyMap<string, Uint8Array>
  /**
   * The run's `policies.mediaFidelity` (docs/guide/media-view.md#fidelity): `spatial` asks for
   * full-resolution image parts (`detail: "high"` on OpenAI-compatible routes); absent is `standard`.
   */
  readonly mediaFidelity?: "standard" | "spatial"
}

export type ModelEvent = Data.TaggedEnum<{
  TextDelta: { readonly text: string }
  ReasoningDelta: { readonly text: string }
  ToolCall: { readonly id: string; readonly name: string; readonly input: unknown }
  Finish: {
    readonly reason: "stop" | "tool-calls" | "length" | "other"
    readonly inputTokens: number
    readonly outputTokens: number
    /** Of `inputTokens`, those read from the provider's prompt cache (priced at the cached-input rate); absent when none. */
    readonly cachedInputTokens?: number
  }
}>

/** Constructors and matchers of `ModelEvent`. */
export const ModelEvent = Data.taggedEnum<ModelEvent>()

/** The provider stayed unavailable (after its retries) or answered something unusable. */
export class ModelUnavailable extends Data.TaggedError("ModelUnavailable")<{
  readonly message: string
  /** What failed underneath (a network error, the last transient failure), kept for the logs. */
  readonly cause?: unknown
  /**
   * The provider refused the request because the conversation outgrew the
   * model's context window: the run fails with `context_overflow`, not
   * `upstream_unavailable` (spec 7).
   */
  readonly contextOverflow?: boolean
}> {}

export interface ModelProvider {
  /** `scripted`, `openai:<model>`, `anthropic:<model>`. */
  readonly route: string
  readonly stream: (request: ModelRequest) => Stream.Stream<ModelEvent, ModelUnavailable>
}

/** A rough token count (4 characters a token) for providers that report none. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/**
 * The provider-neutral conversation a run sends to its model: what the
 * thread's history and each checkpointed step are stored as.
 */
import { Schema } from "effect"
import { ToolCallId } from "./Ids.ts"

export const ToolCall = Schema.Struct({
  /** The service's own id (`tc_...`): what chunks, interactions, hooks and deliveries show. */
  id: ToolCallId,
  /**
   * The provider's id for the call (`call_...`, `toolu_...`), sent back to the
   * provider with the call and its result; absent on calls recorded before
   * the service minted its own ids, whose `id` is the provider's.
   */
  providerId: Schema.optionalKey(Schema.String),
  name: Schema.String,
  input: Schema.Unknown
})
export type ToolCall = typeof ToolCall.Type

export const UserMessage = Schema.Struct({ role: Schema.Literal("user"), content: Schema.String })
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.String,
  toolCalls: Schema.Array(ToolCall)
})
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  toolCallId: ToolCallId,
  toolName: Schema.String,
  /** What the model reads (already capped and wrapped as needed). */
  content: Schema.String,
  isError: Schema.Boolean
})

export const Message = Schema.Union([UserMessage, AssistantMessage, ToolMessage])
export type Message = typeof Message.Type
export type AssistantMessage = typeof AssistantMessage.Type
export type ToolMessage = typeof ToolMessage.Type

/** A tool as the model sees it. */
export interface ToolSpec {
  readonly name: string
  readonly description: string
  readonly inputSchema: Readonly<Record<string, unknown>>
}

/**
 * The provider's id of each call in `messages`, by the service's id: how a
 * provider gets its own ids back on the calls and results it is sent.
 */
export const providerCallIds = (messages: ReadonlyArray<Message>): ((id: string) => string) => {
  const byId = new Map<string, string>()
  for (const m of messages) {
    if (m.role === "assistant") for (const c of m.toolCalls) byId.set(c.id, c.providerId ?? c.id)
  }
  return (id) => byId.get(id) ?? id
}

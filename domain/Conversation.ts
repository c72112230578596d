/**
 * The provider-neutral conversation a run sends to its model: what the
 * thread's history and each checkpointed step are stored as.
 */
import { Schema } from "effect"
import { ToolCallId } from "./Ids.ts"

export const ToolCall = Schema.Struct({
  id: ToolCallId,
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

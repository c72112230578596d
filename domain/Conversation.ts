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

/**
 * A file attached to a user message (spec 4.3 rule 1): a run-scoped artifact,
 * listed to the model in a manifest and, by `as`, sent as the provider's native
 * image or document part, as text, or only placed in the managed workspace.
 */
export const AttachmentRef = Schema.Struct({
  artifactId: Schema.String,
  filename: Schema.String,
  mediaType: Schema.String,
  bytes: Schema.Number,
  sha256: Schema.String,
  as: Schema.Literals(["image", "document", "text", "workspace"]),
  /** Where the file is in the managed workspace, relative to its home; absent without one. */
  path: Schema.optionalKey(Schema.String)
})
export type AttachmentRef = typeof AttachmentRef.Type

export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.String,
  attachments: Schema.optionalKey(Schema.Array(AttachmentRef))
})
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
  isError: Schema.Boolean,
  /**
   * Images the call showed the model (view_media with `output: 'auto'`), each a
   * run artifact: sent as the provider's native image parts while they are
   * among the latest views of the turn (src/model/ToolMedia.ts), else named.
   */
  media: Schema.optionalKey(Schema.Array(AttachmentRef))
})

/** A turn's user message: its text and, when it has some, its attachments. */
export const userMessage = (content: string, attachments: ReadonlyArray<AttachmentRef> | undefined): UserMessage =>
  attachments === undefined || attachments.length === 0
    ? { role: "user", content }
    : { role: "user", content, attachments }

export const Message = Schema.Union([UserMessage, AssistantMessage, ToolMessage])
export type Message = typeof Message.Type
export type AssistantMessage = typeof AssistantMessage.Type
export type UserMessage = typeof UserMessage.Type
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
export const providerCallIds = (messages: ReadonlyArray<Message>): (id: string) => string => {
  const byId = new Map<string, string>()
  for (const m of messages) {
    if (m.role === "assistant") { for (const c of m.toolCalls) byId.set(c.id, c.providerId ?? c.id) }
  }
  return (id) => byId.get(id) ?? id
}

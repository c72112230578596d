/**
 * A thread's history as the AI SDK's `UIMessage`s (`GET /v1/threads/:id/messages`): each run is
 * the user's message (its attachments as file parts, then its text, as `useChat` sends them) and
 * the assistant's message, whose parts are what `useChat` builds from the run's stream. The
 * schema documents the shape and checks what the service answers.
 */
import { Schema } from "effect"
import { RunId } from "./Ids.ts"

const opt = Schema.optionalKey

const streamingState = opt(Schema.Literals(["streaming", "done"]))

export const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String, state: streamingState })
export const ReasoningPart = Schema.Struct({
  type: Schema.Literal("reasoning"),
  id: opt(Schema.String),
  text: Schema.String,
  state: streamingState
})
/** An attachment: `url` is the run's copy of the file (`GET /v1/artifacts/:id`, with the API key). */
export const FilePart = Schema.Struct({
  type: Schema.Literal("file"),
  mediaType: Schema.String,
  filename: opt(Schema.String),
  url: Schema.String
})
export const StepStartPart = Schema.Struct({ type: Schema.Literal("step-start") })

const toolPart = <S extends string, F extends Schema.Struct.Fields>(state: S, fields: F) =>
  Schema.Struct({
    /** `tool-<tool name>`, as `useChat` names the part of a call. */
    type: Schema.TemplateLiteral(["tool-", Schema.String]),
    toolCallId: Schema.String,
    state: Schema.Literal(state),
    ...fields
  })

/**
 * A tool call, by its state: its input still streaming (a run going on), available (the call
 * running, or waiting for a person), its output (an expected failure is an output of type
 * `tool-output-error`), an error (the call never finished), or denied (with the interaction that
 * decided it, else the call's own id, and the reason the model read).
 */
export const ToolPart = Schema.Union([
  toolPart("input-streaming", { input: opt(Schema.Unknown) }),
  toolPart("input-available", { input: Schema.Unknown }),
  toolPart("output-available", { input: Schema.Unknown, output: Schema.Unknown }),
  toolPart("output-error", { input: opt(Schema.Unknown), errorText: Schema.String }),
  toolPart("output-denied", {
    input: Schema.Unknown,
    approval: Schema.Struct({ id: Schema.String, approved: Schema.Literal(false), reason: opt(Schema.String) })
  })
])
export type ToolPart = typeof ToolPart.Type

/** A `data-svc-*` part as the stream carried it (spec 6.2). */
export const DataPart = Schema.Struct({
  type: Schema.TemplateLiteral(["data-", Schema.String]),
  id: opt(Schema.String),
  data: Schema.Unknown
})

export const MessagePart = Schema.Union([TextPart, ReasoningPart, FilePart, StepStartPart, ToolPart, DataPart])
export type MessagePart = typeof MessagePart.Type

export const ThreadMessage = Schema.Struct({
  /** The assistant's message has its run's id (the stream's `messageId`); the user's is `msg_` and the same body. */
  id: Schema.String,
  role: Schema.Literals(["user", "assistant"]),
  parts: Schema.Array(MessagePart),
  metadata: Schema.Struct({ runId: RunId, createdAt: Schema.String })
}).annotate({ identifier: "ThreadMessage" })
export type ThreadMessage = typeof ThreadMessage.Type

const runPrefix = "run_"
const userPrefix = "msg_"

/** The id of the user's message that started `runId`. */
export const userMessageId = (runId: RunId): string => userPrefix + runId.slice(runPrefix.length)

/** Which message of which run a message id names (undefined: no message id of this route). */
export const messageOfId = (
  id: string
): { readonly runId: RunId; readonly role: ThreadMessage["role"] } | undefined => {
  if (id.startsWith(runPrefix)) return { runId: RunId.make(id), role: "assistant" }
  if (id.startsWith(userPrefix)) return { runId: RunId.make(runPrefix + id.slice(userPrefix.length)), role: "user" }
  return undefined
}

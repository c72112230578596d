/** Interactions (spec 2.4, 4.4): approval requests and questions that park a run. */
import { Schema } from "effect"
import { AgentId, HookId, InteractionId, RunId, ThreadId, ToolCallId, WorkerId } from "./Ids.ts"

const opt = Schema.optionalKey

export const InteractionKind = Schema.Literals(["approval_request", "question"])
export type InteractionKind = typeof InteractionKind.Type
export const InteractionStatus = Schema.Literals(["pending", "resolved", "cancelled"])
export type InteractionStatus = typeof InteractionStatus.Type

const Option = Schema.Struct({ id: Schema.String, label: Schema.String })

export const Question = Schema.Struct({
  id: Schema.String,
  prompt: opt(Schema.String),
  options: opt(Schema.Array(Option)),
  multiple: Schema.Boolean,
  multiline: Schema.Boolean,
  allowOther: Schema.Boolean
})
export type Question = typeof Question.Type

/** A question interaction's `request`. */
export const QuestionRequest = Schema.Struct({
  title: Schema.String,
  details: opt(Schema.String),
  questions: opt(Schema.Array(Question)),
  actions: opt(Schema.Array(Option))
}).annotate({ identifier: "QuestionRequest" })
export type QuestionRequest = typeof QuestionRequest.Type

/** The input of the built-in `ask_question` tool: `request` with question flags optional. */
export const AskQuestionInput = Schema.Struct({
  title: Schema.String.check(Schema.isNonEmpty({ message: "title must not be empty" })),
  details: opt(Schema.String),
  questions: opt(
    Schema.Array(
      Schema.Struct({
        id: Schema.String.check(Schema.isNonEmpty()),
        prompt: Schema.String,
        options: opt(Schema.Array(Option)),
        multiple: opt(Schema.Boolean),
        multiline: opt(Schema.Boolean),
        allowOther: opt(Schema.Boolean)
      })
    )
  ),
  actions: opt(Schema.Array(Option))
})
export type AskQuestionInput = typeof AskQuestionInput.Type

export const InputResponse = Schema.Struct({
  requestId: Schema.String,
  optionId: opt(Schema.String),
  optionIds: opt(Schema.Array(Schema.String)),
  text: opt(Schema.String)
})
export type InputResponse = typeof InputResponse.Type

export const ResolveInteractionBody = Schema.Struct({
  inputResponses: opt(Schema.Array(InputResponse)),
  cancel: opt(Schema.Boolean),
  reason: opt(Schema.String.check(Schema.isMaxLength(4000)))
}).annotate({ identifier: "ResolveInteractionBody" })
export type ResolveInteractionBody = typeof ResolveInteractionBody.Type

export const BatchResolveBody = Schema.Struct({
  items: Schema.Array(Schema.Struct({ id: InteractionId, ...ResolveInteractionBody.fields })).check(
    Schema.isMaxLength(20, { message: "at most 20 items" })
  )
}).annotate({ identifier: "BatchResolveBody" })

export const BatchItemStatus = Schema.Literals([
  "resolved",
  "already_resolved",
  "conflict",
  "not_found",
  "invalid_body"
])
export type BatchItemStatus = typeof BatchItemStatus.Type

export const BatchResolveResult = Schema.Struct({
  items: Schema.Array(Schema.Struct({ id: Schema.NullOr(InteractionId), status: BatchItemStatus }))
}).annotate({ identifier: "BatchResolveResult" })

export const Interaction = Schema.Struct({
  id: InteractionId,
  object: Schema.Literal("interaction"),
  runId: RunId,
  rootRunId: RunId,
  workerRef: Schema.NullOr(WorkerId),
  threadId: ThreadId,
  agentId: AgentId,
  kind: InteractionKind,
  status: InteractionStatus,
  stepNumber: Schema.Number,
  toolName: Schema.String,
  toolCallId: ToolCallId,
  hookId: Schema.NullOr(HookId),
  /** Approval only (the tool's input args); a question carries none (spec 2.4). */
  input: opt(Schema.Unknown),
  preview: opt(Schema.Record(Schema.String, Schema.Unknown)),
  decision: Schema.NullOr(Schema.Literals(["allow", "deny", "cancel"])),
  reason: Schema.NullOr(Schema.String),
  request: Schema.NullOr(QuestionRequest),
  resolution: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  expiresAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  resolvedAt: Schema.NullOr(Schema.String),
  updatedAt: Schema.String
}).annotate({ identifier: "Interaction" })
export type Interaction = typeof Interaction.Type

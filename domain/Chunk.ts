/**
 * The stream chunks a run emits (spec 6.2): the AI SDK UI message stream (v1)
 * chunk kinds we use, plus our `data-svc-*` parts. One Schema union: the
 * event log stores and replays it, the SSE encoder writes it, and tests can
 * decode a stream with it.
 */
import { Schema } from "effect"
import { UsageTotal } from "./Run.ts"
import { TaskData, WorkerMetaData } from "./Worker.ts"

const opt = Schema.optionalKey

const part = <T extends string, F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Schema.Struct({ type: Schema.Literal(type), ...fields })

const data = <T extends string, D extends Schema.Top>(type: T, payload: D) =>
  Schema.Struct({ type: Schema.Literal(type), id: opt(Schema.String), data: payload })

export const StartChunk = part("start", { messageId: opt(Schema.String) })
export const FinishChunk = part("finish", { finishReason: opt(Schema.Literals(["stop", "error", "other"])) })
export const AbortChunk = part("abort", { reason: opt(Schema.String) })
export const ErrorChunk = part("error", { errorText: Schema.String })

/**
 * The `output` of a `tool-output-available` chunk for an expected failure the model reads
 * (an MCP `isError`, an HTTP 4xx/5xx, a code-host refusal, a skill not loaded, ...): the tool
 * call finished, and failed. `error.message` is what the model read, less `details`.
 */
export const ToolFailureOutput = Schema.Struct({
  type: Schema.Literal("tool-output-error"),
  error: Schema.Struct({
    code: Schema.String,
    message: Schema.String,
    details: opt(Schema.Record(Schema.String, Schema.Unknown))
  })
})
export type ToolFailureOutput = typeof ToolFailureOutput.Type

/** A tool finished: its output, or a ToolFailureOutput for an expected failure. */
export const ToolOutputAvailable = part("tool-output-available", { toolCallId: Schema.String, output: Schema.Unknown })
/** Lifecycle: the call never finished (the step's time bound interrupted it); the model reads nothing of it. */
export const ToolOutputError = part("tool-output-error", { toolCallId: Schema.String, errorText: Schema.String })
/** An approval denied; the reason arrives just before it, in `data-svc-tool-denied`. */
export const ToolOutputDenied = part("tool-output-denied", { toolCallId: Schema.String })
/** `data-svc-tool-denied`: the denied call and `reason`, exactly what the model read in its place. */
export const ToolDeniedData = Schema.Struct({
  toolCallId: Schema.String,
  toolName: Schema.String,
  reason: Schema.String
})

export const TerminalData = Schema.Struct({ terminalReason: Schema.NullOr(Schema.String), output: opt(Schema.Unknown) })
export const InputRequestedData = Schema.Struct({
  interactionId: Schema.String,
  toolCallId: Schema.String,
  request: Schema.Record(Schema.String, Schema.Unknown),
  expiresAt: Schema.String
})

export const Chunk = Schema.Union([
  StartChunk,
  FinishChunk,
  AbortChunk,
  ErrorChunk,
  part("start-step", {}),
  part("finish-step", {}),
  /** The step that was streaming when its executor died is replayed from its start. */
  part("reset-step", {}),
  part("text-start", { id: Schema.String }),
  part("text-delta", { id: Schema.String, delta: Schema.String }),
  part("text-end", { id: Schema.String }),
  part("reasoning-start", { id: Schema.String }),
  part("reasoning-delta", { id: Schema.String, delta: Schema.String }),
  part("reasoning-end", { id: Schema.String }),
  part("tool-input-start", { toolCallId: Schema.String, toolName: Schema.String }),
  part("tool-input-available", { toolCallId: Schema.String, toolName: Schema.String, input: Schema.Unknown }),
  ToolOutputAvailable,
  ToolOutputError,
  ToolOutputDenied,
  data("data-svc-terminal", TerminalData),
  data("data-svc-usage", UsageTotal),
  data(
    "data-svc-progress",
    Schema.Struct({
      kind: Schema.Literals(["summary", "activity"]),
      summaryAvailable: Schema.Boolean,
      text: Schema.String
    })
  ),
  data("data-svc-input-requested", InputRequestedData),
  data("data-svc-tool-denied", ToolDeniedData),
  data("data-svc-task", TaskData),
  data("data-svc-worker-meta", WorkerMetaData),
  data("data-svc-followup-replayed", Schema.Struct({ followupId: Schema.String, text: Schema.String })),
  data(
    "data-svc-tool-result-overflow",
    Schema.Struct({
      toolCallId: Schema.String,
      toolName: Schema.String,
      bytes: Schema.Number,
      capBytes: Schema.Number,
      recovery: Schema.Literals(["workspace", "remote-handler", "none"]),
      /** recovery 'workspace': the file holding the whole result, relative to the workspace root. */
      path: opt(Schema.String),
      /** The agent's oversized-result handler: it archived the whole result ('remote-handler') or failed to ('none'). */
      resultHandlerId: opt(Schema.String),
      /** recovery 'remote-handler': the handler's durable locators of the archived result. */
      artifactId: opt(Schema.String),
      url: opt(Schema.String),
      /** Why the whole result could not be kept (recovery 'none' after a failed spill or archive). */
      message: opt(Schema.String),
      /** recovery 'none' after a failed archive: the handler's failure. */
      error: opt(Schema.Struct({ code: Schema.String, reason: Schema.String, message: Schema.String }))
    })
  ),
  data(
    "data-svc-http-connection-unavailable",
    Schema.Struct({
      connectionId: Schema.String,
      name: Schema.String,
      errorCode: Schema.String,
      message: Schema.String
    })
  )
])
export type Chunk = typeof Chunk.Type
export type ChunkType = Chunk["type"]

/** A chunk of the run's log with its sequence number (the SSE frame id). */
export interface SequencedChunk {
  readonly seq: number
  readonly chunk: Chunk
}

/** The chunk types after which a stream is over, unless more follow (a resumed run). */
export const isStreamEnd = (chunk: Chunk): boolean => chunk.type === "finish" || chunk.type === "abort"

/**
 * A stream end nothing can follow: a run's terminal `finish` (stop or error) or
 * an `abort`. A parked run's turn ends with `finish` 'other' and goes on later.
 */
export const isFinalEnd = (chunk: Chunk): boolean =>
  chunk.type === "abort" || (chunk.type === "finish" && chunk.finishReason !== "other")

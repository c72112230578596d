/** What the streams benchmark and its client process (StreamClient.ts) say to each other over IPC. */
import { Schema } from "effect"

const Target = Schema.Struct({ runId: Schema.String, lastEventId: Schema.Number })
const ToResolve = Schema.Struct({ runId: Schema.String, interactionId: Schema.String })

export const Command = Schema.Union([
  /** Opens a stream per run, resumed after `lastEventId` (the parked turn's end): each waits for its run to resume. */
  Schema.Struct({ type: Schema.Literal("open"), runs: Schema.Array(Target), concurrency: Schema.Number }),
  /** Approves the runs one after the other; each waits for its stream to end before the next. */
  Schema.Struct({ type: Schema.Literal("resolve"), runs: Schema.Array(ToResolve) }),
  Schema.Struct({ type: Schema.Literal("census") }),
  /** Closes every stream. */
  Schema.Struct({ type: Schema.Literal("close") })
])
export type Command = typeof Command.Type

export const Reply = Schema.Union([
  Schema.Struct({ type: Schema.Literal("ready") }),
  /** Requests written (the service answers a waiting stream's headers with its first chunk). */
  Schema.Struct({ type: Schema.Literal("opened"), sent: Schema.Number, ms: Schema.Number }),
  Schema.Struct({
    type: Schema.Literal("resolved"),
    /** Per run: from the resolve request to the stream's first bytes, and to its `[DONE]`. */
    firstChunkMs: Schema.Array(Schema.Number),
    doneMs: Schema.Array(Schema.Number),
    /** Streams that did not carry a proper resumption (tool result, answer, normal end). */
    bad: Schema.Number,
    firstError: Schema.optionalKey(Schema.String)
  }),
  Schema.Struct({
    type: Schema.Literal("census"),
    /** Requests sent whose connection is still open and that have not ended. */
    waiting: Schema.Number,
    ended: Schema.Number,
    failed: Schema.Number,
    firstError: Schema.optionalKey(Schema.String)
  }),
  Schema.Struct({ type: Schema.Literal("closed") })
])
export type Reply = typeof Reply.Type

export const decodeCommand = Schema.decodeUnknownSync(Command)
export const decodeReply = Schema.decodeUnknownSync(Reply)

/** What a resumed run's stream contains: the tool's result, the answer, a normal end. */
export const resumedProperly = (text: string): boolean =>
  text.includes("\"tool-output-available\"") && text.includes("\"delta\":\"done\"") &&
  text.includes("\"finishReason\":\"stop\"") &&
  text.endsWith("data: [DONE]\n\n")

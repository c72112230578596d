/**
 * How a run's loop ends (the Outcome finalization records) and how a tool
 * call settles within a step (what the model reads and the chunk that
 * announces it).
 */
import { Data } from "effect"
import type { Chunk } from "../../domain/Chunk.ts"
import type { ToolCall, ToolMessage } from "../../domain/Conversation.ts"
import type { RunError } from "../../domain/Run.ts"
import { failureOf, type ToolOutcome } from "../tools/ToolOutcome.ts"

export type Outcome = Data.TaggedEnum<{
  Completed: { readonly terminalReason: string | null; readonly output: unknown }
  Failed: { readonly error: RunError; readonly terminalReason: string | null }
  Parked: {}
  /** Started again (a redelivered Start) while its interactions or workers are still pending: nothing to add to the stream. */
  StillParked: {}
  /** The step waits on its workers only (subagents): the turn's stream stays open, the run holds no fiber. */
  Delegated: {}
}>
export const Outcome = Data.taggedEnum<Outcome>()

export const completed = (terminalReason: string | null, output?: unknown): Outcome =>
  Outcome.Completed({ terminalReason, output })

export const failed = (
  code: string,
  message: string,
  terminalReason: string | null = null,
  reference?: string
): Outcome =>
  Outcome.Failed({
    terminalReason,
    error: { type: "api_error", code, message, ...(reference === undefined ? {} : { reference }) }
  })

/** A tool call's result: what the model reads and the chunks that announce it (none for results announced before a park). */
export interface Settled {
  readonly message: ToolMessage
  readonly chunks: ReadonlyArray<Chunk>
}

/**
 * A call that finished: `tool-output-available`, its output the result, or for an expected
 * failure the failure (`{ type: "tool-output-error", error }`, spec 6.2). The lifecycle
 * `tool-output-error` is not a result: it announces a call that never finished.
 */
export const settle = (call: ToolCall, outcome: ToolOutcome): Settled => ({
  message: {
    role: "tool",
    toolCallId: call.id,
    toolName: call.name,
    content: outcome.modelText ?? outcome.text,
    isError: outcome.isError,
    ...(outcome.media === undefined || outcome.media.length === 0 ? {} : { media: outcome.media })
  },
  chunks: [{
    type: "tool-output-available",
    toolCallId: call.id,
    output: outcome.isError ? failureOf(outcome) : outcome.output
  }]
})

/**
 * A denied call: the model reads the reason verbatim; the stream shows the same reason in
 * `data-svc-tool-denied`, then `tool-output-denied` (which carries none in the AI SDK).
 */
export const denied = (call: ToolCall, reason: string | null): Settled => {
  const content = reason ?? "The tool call was denied."
  return {
    message: { role: "tool", toolCallId: call.id, toolName: call.name, content, isError: true },
    chunks: [
      { type: "data-svc-tool-denied", data: { toolCallId: call.id, toolName: call.name, reason: content } },
      { type: "tool-output-denied", toolCallId: call.id }
    ]
  }
}

export const inCallOrder = (calls: ReadonlyArray<ToolCall>, settled: ReadonlyArray<Settled>): Array<Settled> =>
  calls.flatMap((call) => settled.filter((s) => s.message.toolCallId === call.id))

/** A short summary for people reviewing a call. */
export const previewOf = (call: ToolCall): Record<string, unknown> => ({
  toolName: call.name,
  summary: `${call.name}(${JSON.stringify(call.input).slice(0, 200)})`
})

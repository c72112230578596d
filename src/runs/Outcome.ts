/**
 * How a run's loop ends (the Outcome finalization records) and how a tool
 * call settles within a step (what the model reads and the chunk that
 * announces it).
 */
import { Data } from "effect"
import type { Chunk } from "../../domain/Chunk.ts"
import type { ToolCall, ToolMessage } from "../../domain/Conversation.ts"
import type { RunError } from "../../domain/Run.ts"
import type { ToolOutcome } from "../tools/ToolOutcome.ts"

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

/** A tool call's result: what the model reads and the chunk that announces it (none for results announced before a park). */
export interface Settled {
  readonly message: ToolMessage
  readonly chunk: Chunk | undefined
}

export const settle = (call: ToolCall, outcome: ToolOutcome): Settled => ({
  message: {
    role: "tool",
    toolCallId: call.id,
    toolName: call.name,
    content: outcome.modelText ?? outcome.text,
    isError: outcome.isError
  },
  chunk: outcome.isError
    ? { type: "tool-output-error", toolCallId: call.id, errorText: outcome.text }
    : { type: "tool-output-available", toolCallId: call.id, output: outcome.output }
})

/** A denied call: the model reads the reason verbatim; the stream shows tool-output-denied. */
export const denied = (call: ToolCall, reason: string | null): Settled => ({
  message: {
    role: "tool",
    toolCallId: call.id,
    toolName: call.name,
    content: reason ?? "The tool call was denied.",
    isError: true
  },
  chunk: { type: "tool-output-denied", toolCallId: call.id }
})

export const inCallOrder = (calls: ReadonlyArray<ToolCall>, settled: ReadonlyArray<Settled>): Array<Settled> =>
  calls.flatMap((call) => settled.filter((s) => s.message.toolCallId === call.id))

/** A short summary for people reviewing a call. */
export const previewOf = (call: ToolCall): Record<string, unknown> => ({
  toolName: call.name,
  summary: `${call.name}(${JSON.stringify(call.input).slice(0, 200)})`
})

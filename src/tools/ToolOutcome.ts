/**
 * The result of one tool call, whatever family ran it. Tool errors are results
 * the model reads, never run failures: an expected failure is built one way
 * (`failure`) and has one shape, `{ type: "tool-output-error", error: { code,
 * message, details? } }`, read by the model as `code: message` and shown on the
 * stream as the output of a `tool-output-available` chunk (spec 6.2).
 */
import { Predicate, Schema } from "effect"
import { ToolFailureOutput } from "../../domain/Chunk.ts"
import type { AttachmentRef } from "../../domain/Conversation.ts"

export interface ToolOutcome {
  /** What the stream shows as the tool's output (for an error, see `failureOf`). */
  readonly output: unknown
  /** The result as text: what the model reads unless `modelText` says otherwise. */
  readonly text: string
  /** What the model reads when it differs from `text` (the untrusted envelope). */
  readonly modelText?: string
  readonly isError: boolean
  /** Set when the result was over the tool's resultCapBytes and was cut down. */
  readonly overflow?: Overflow
  /** Images the model is shown with the result (view_media, `output: 'auto'`): run artifacts, sent as image parts. */
  readonly media?: ReadonlyArray<AttachmentRef>
  /** Tokens a model call made by the tool itself used (view_media's analysis): metered as the run's. */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number; readonly cachedInputTokens?: number }
}

/** A result over its tool's cap (spec 4.6 rule 5). */
export interface Overflow {
  readonly bytes: number
  readonly capBytes: number
  /** The whole result's text, for the run to keep (`spill`) or archive (`Archive`); never shown as it is. */
  readonly full: string
  /** Where the whole result went, once the run's Toolset tried to keep it; absent: nowhere. */
  readonly recovery?: Recovery
}

/**
 * Where an over-cap result's whole text went (spec 4.6 rule 5): the workspace
 * (`spill`), the agent's oversized-result handler (`archive`), or nowhere,
 * with why (`message`; `error` and `resultHandlerId` when the handler failed).
 */
export type Recovery =
  | { readonly kind: "workspace"; readonly path: string }
  | {
    readonly kind: "remote-handler"
    readonly resultHandlerId: string
    readonly artifactId: string
    readonly url?: string
  }
  | {
    readonly kind: "none"
    readonly message: string
    readonly resultHandlerId?: string
    readonly error?: { readonly code: string; readonly reason: string; readonly message: string }
  }

/** The output of an expected failure. */
export type Failure = ToolFailureOutput

/** A successful result: `output` on the stream, `text` for the model (its JSON unless given). */
export const success = (output: unknown, text: string = JSON.stringify(output) ?? "null"): ToolOutcome => ({
  output,
  text,
  isError: false
})

/**
 * An expected failure: the call could not do what was asked, for the reason `code` names.
 * The model reads `code: message`, then `details` as JSON when there are some (what the
 * call produced before it failed, e.g. a killed command's output).
 */
export const failure = (
  code: string,
  message: string,
  details?: Readonly<Record<string, unknown>>,
  options?: {
    /** What the model reads instead (an HTTP error answer reads as the answer itself). */
    readonly text?: string
  }
): ToolOutcome => {
  const output: Failure = {
    type: "tool-output-error",
    error: { code, message, ...(details === undefined ? {} : { details }) }
  }
  return {
    output,
    text: options?.text ??
      (details === undefined ? `${code}: ${message}` : `${code}: ${message}\n${JSON.stringify(details)}`),
    isError: true
  }
}

const isFailure = Schema.is(ToolFailureOutput)
const isBareFailure = Schema.is(Schema.Struct({ error: ToolFailureOutput.fields.error }))

/**
 * What the stream shows of an error outcome: its failure, as built by `failure`, or one
 * made of what the model read, with code `tool_error` (an MCP result with `isError`, a
 * result cut to its tool's cap). A failure stored before it had its `type` gets it.
 */
export const failureOf = (outcome: ToolOutcome): Failure => {
  const output = outcome.output
  if (isFailure(output)) return output
  if (isBareFailure(output)) return { type: "tool-output-error", error: output.error }
  return { type: "tool-output-error", error: { code: "tool_error", message: outcome.text } }
}

/** Whether `u` is an outcome already (a handler may answer one, or a plain result to show as JSON). */
export const isOutcome = (u: unknown): u is ToolOutcome =>
  Predicate.isObject(u) && "output" in u && Predicate.isString(u["text"]) && Predicate.isBoolean(u["isError"])

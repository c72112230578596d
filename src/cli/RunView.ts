/**
 * A run as the terminal shows it while it streams: answer text as it
 * arrives, one plain line per tool call, result, approval or question (with
 * the commands that answer it), and the run's final status and usage; or,
 * with `--json`, one JSON line per event (`{"id","chunk"}`) and the run
 * (`{"run"}`). A run that ended failed or cancelled fails the command
 * (RunUnsuccessful: exit 3 or 4).
 */
import type { ApiClient, Chunk, Failure, RunEvents } from "agent-service/client"
import { normalized } from "agent-service/client"
import { Effect, Option, Schema, Stream } from "effect"
import { ToolFailureOutput } from "../../domain/Chunk.ts"
import type { RunId } from "../../domain/Ids.ts"
import { QuestionRequest } from "../../domain/Interaction.ts"
import type { Run } from "../../domain/Run.ts"
import { RunUnsuccessful } from "./CommandFailure.ts"
import { Invocation } from "./Invocation.ts"
import { Output } from "./Output.ts"

const maxJson = 200

/** Compact JSON, cut at `maxJson` characters. */
export const brief = (value: unknown): string => {
  const text = JSON.stringify(value) ?? "undefined"
  return text.length > maxJson ? `${text.slice(0, maxJson)}...` : text
}

const ApprovalRequest = Schema.Struct({
  kind: Schema.Literal("approval_request"),
  toolName: Schema.String,
  input: Schema.Unknown
})
const Question = Schema.Struct({ kind: Schema.Literal("question"), ...QuestionRequest.fields })
const decodeRequest = Schema.decodeUnknownOption(Schema.Union([ApprovalRequest, Question]))

/** The lines that present an interaction and how to answer it (with the CLI's `cliName`). */
export const requestLines = (cliName: string, interactionId: string, request: unknown): ReadonlyArray<string> =>
  Option.match(decodeRequest(request), {
    onNone: () => [`[input needed] ${interactionId}: ${brief(request)}`],
    onSome: (r) =>
      r.kind === "approval_request"
        ? [
          `[approval] ${interactionId}: ${r.toolName} ${brief(r.input)}`,
          `  approve: ${cliName} interactions approve ${interactionId}`,
          `  deny:    ${cliName} interactions deny ${interactionId}`
        ]
        : [
          `[question] ${interactionId}: ${r.title}`,
          ...(r.questions ?? []).map((q) =>
            `  ${q.id}: ${q.prompt ?? ""}${
              q.options === undefined ? "" : ` (options: ${q.options.map((o) => o.id).join(", ")})`
            }`
          ),
          `  answer:  ${cliName} interactions answer ${interactionId}${
            (r.questions ?? []).length === 1 ? "" : " --question <id>"
          } --text <answer> | --option <id>`
        ]
  })

const isToolFailure = Schema.is(ToolFailureOutput)

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** Renders chunks as they come; `end` prints the run's final line. */
export const runView = Effect.gen(function*() {
  const out = yield* Output
  const cliName = (yield* Invocation).name
  const toolNames = new Map<string, string>()
  const nameOf = (toolCallId: string) => toolNames.get(toolCallId) ?? toolCallId
  const deniedWithReason = new Set<string>()

  const show = (chunk: Chunk): Effect.Effect<void> => {
    switch (chunk.type) {
      case "start":
      case "start-step":
        return out.progress("waiting for the model")
      case "text-start":
      case "reasoning-start":
        return Effect.andThen(
          out.progress(undefined),
          chunk.type === "reasoning-start" ? out.write("[thinking] ") : Effect.void
        )
      case "text-delta":
      case "reasoning-delta":
        return out.write(chunk.delta)
      case "text-end":
      case "reasoning-end":
        return out.endLine
      case "tool-input-start":
        toolNames.set(chunk.toolCallId, chunk.toolName)
        return out.progress(`calling ${chunk.toolName}`)
      case "tool-input-available":
        toolNames.set(chunk.toolCallId, chunk.toolName)
        return Effect.andThen(
          out.line(`[tool] ${chunk.toolName} ${brief(chunk.input)}`),
          out.progress(`running ${chunk.toolName}`)
        )
      case "tool-output-available":
        return Effect.andThen(
          isToolFailure(chunk.output)
            ? out.line(
              `[tool error] ${nameOf(chunk.toolCallId)}: ${chunk.output.error.code}: ${chunk.output.error.message}`
            )
            : out.line(`[result] ${nameOf(chunk.toolCallId)} ${brief(chunk.output)}`),
          out.progress("waiting for the model")
        )
      case "tool-output-error":
        return out.line(`[tool error] ${nameOf(chunk.toolCallId)}: ${chunk.errorText}`)
      case "data-svc-tool-denied":
        deniedWithReason.add(chunk.data.toolCallId)
        return out.line(`[denied] ${chunk.data.toolName}: ${chunk.data.reason}`)
      case "tool-output-denied":
        // Said with its reason just before (a stream stored without it says only the tool).
        return deniedWithReason.has(chunk.toolCallId) ? Effect.void : out.line(`[denied] ${nameOf(chunk.toolCallId)}`)
      case "data-svc-input-requested":
        return Effect.andThen(
          out.progress(undefined),
          Effect.forEach(requestLines(cliName, chunk.data.interactionId, chunk.data.request), out.line)
        )
      case "data-svc-progress":
        return out.progress(chunk.data.text)
      case "data-svc-followup-replayed":
        return out.line(`[follow-up] ${chunk.data.text}`)
      case "data-svc-tool-result-overflow": {
        const d = chunk.data
        return out.line(
          `[overflow] ${d.toolName}: ${d.bytes} bytes over ${d.capBytes} (${d.recovery}${
            d.path === undefined ? "" : ` ${d.path}`
          })`
        )
      }
      case "data-svc-http-connection-unavailable":
        return out.line(`[unavailable] ${chunk.data.name}: ${chunk.data.errorCode} ${chunk.data.message}`)
      case "error":
        return out.line(`[error] ${chunk.errorText}`)
      case "reset-step":
        return out.line("[step restarted]")
      case "finish":
      case "abort":
        return Effect.andThen(out.endLine, out.progress(undefined))
      default:
        return Effect.void
    }
  }

  /** The run's line: status, and usage or the reason it stopped. */
  const runLine = (run: Run) =>
    Effect.gen(function*() {
      const usage = run.usage === undefined
        ? ""
        : `: ${run.usage.inputTokens} in / ${run.usage.outputTokens} out tokens, ${run.usage.costCents} cents, ${
          plural(run.usage.steps, "step")
        }`
      const reason = run.error?.message ?? run.terminalReason
      yield* out.line(
        `[run] ${run.id} ${run.status}${usage}${reason === null || reason === undefined ? "" : ` (${reason})`}`
      )
      if (run.status === "waiting_for_approval" || run.status === "waiting_for_input") {
        yield* out.line(`  follow:  ${cliName} runs tail ${run.id}`)
      }
    })

  /** The run as it stands once its stream ended; fails when it failed or was cancelled. */
  const end = (api: ApiClient, runId: RunId, json: boolean) =>
    Effect.gen(function*() {
      yield* out.progress(undefined)
      const run = yield* normalized(api.runs.get({ params: { id: runId } }))
      yield* json ? out.line(JSON.stringify({ run })) : runLine(run)
      if (run.status === "failed" || run.status === "cancelled") {
        return yield* new RunUnsuccessful({ status: run.status })
      }
      return run
    })

  /** Shows every event of `events` (as JSON lines with `json`), then the run's final line. */
  const follow = (
    api: ApiClient,
    runId: RunId,
    events: Stream.Stream<RunEvents.RunEvent, Failure>,
    json = false
  ) =>
    Effect.andThen(
      Stream.runForEach(events, (event) => json ? out.line(JSON.stringify(event)) : show(event.chunk)),
      end(api, runId, json)
    )

  return { show, runLine, end, follow }
})

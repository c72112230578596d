/**
 * Write replay (spec 4.8): every write tool call is journaled (run, tool call
 * id) before it is dispatched and settled with its outcome after. The same
 * call again (a run resuming a step it had started) replays what was saved: a
 * completed call its result, a definite failure its error. A call found
 * dispatched but never settled (the process died in between) may or may not
 * have happened on GitHub: it answers `codehost_action_outcome_unknown`, to be
 * reconciled by reading the state; a retry is a new tool call.
 */
import { Effect, Option, Schema } from "effect"
import type { CodehostRepo } from "../store/CodehostRepo.ts"
import { nowIso } from "../Time.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"

const Saved = Schema.Struct({
  output: Schema.Unknown,
  text: Schema.String,
  modelText: Schema.optionalKey(Schema.String),
  isError: Schema.Boolean
})
const decodeSaved = Schema.decodeUnknownOption(Saved)

export const unknownOutcome = ToolOutcome.failure(
  "codehost_action_outcome_unknown",
  "This write was sent to GitHub but its outcome was never recorded (the run was interrupted): it may or may not have happened. " +
    "Read the current state (the issue, pull request, branch...) before deciding; retry only with a new tool call once you know it did not happen."
)

export const make = (repo: CodehostRepo["Service"], runId: string) => ({
  guard: (
    toolName: string,
    callId: string,
    attempt: Effect.Effect<ToolOutcome.ToolOutcome>
  ): Effect.Effect<ToolOutcome.ToolOutcome> =>
    Effect.gen(function*() {
      const prior = yield* repo.journal(runId, callId, toolName, yield* nowIso)
      if (Option.isSome(prior)) {
        if (prior.value.status === "dispatched") return unknownOutcome
        return Option.getOrElse(decodeSaved(prior.value.outcome), () => unknownOutcome)
      }
      const outcome = yield* attempt
      const { overflow: _, ...saved } = outcome
      yield* repo.settle(runId, callId, outcome.isError ? "failed" : "completed", saved, yield* nowIso)
      return outcome
    })
})

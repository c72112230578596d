/**
 * Guards the step loop applies to every step, beside the run's caps: the
 * per-step time bound (SVC_MAX_STEP_MS: one model call and its tool calls),
 * the repeat-loop halt (the same tool calls with the same input giving the
 * same results, step after step), and the platform's cost ceiling per run
 * (SVC_MAX_RUN_CENTS).
 */
import { Clock, Duration, Effect } from "effect"
import type { Message } from "../../domain/Conversation.ts"
import type { UsageTotal } from "../../domain/Run.ts"
import type { RunPlan } from "../../domain/RunPlan.ts"
import { canonicalJson } from "../CanonicalJson.ts"
import { completed, failed, type Outcome } from "./Outcome.ts"

/** Identical tool steps in a row (no user message, no answer between them) that halt the run. */
export const RepeatLimit = 5

/** What a bounded part of a step answers when the step's time ran out (its work was interrupted). */
export const Overrun = { _tag: "Overrun" } as const
export type Overrun = typeof Overrun
export const isOverrun = (value: unknown): value is Overrun => value === Overrun

/** The step's deadline (epoch millis), taken when it opens. */
export const stepDeadline = (maxStepMs: number) => Effect.map(Clock.currentTimeMillis, (now) => now + maxStepMs)

/** Runs a part of the step until the step's deadline; past it, the part is interrupted (tool calls are its child fibers). */
export const within = <A, E, R>(deadline: number, part: Effect.Effect<A, E, R>): Effect.Effect<A | Overrun, E, R> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.timeoutOrElse(part, {
      duration: Duration.millis(Math.max(0, deadline - now)),
      orElse: () => Effect.succeed(Overrun)
    }))

export const stepOverrun: Outcome = completed("step_duration_exceeded")

/**
 * A tool step as a comparable text: its calls (name and canonical input,
 * without their ids) and what each returned. Two steps with the same
 * signature made no progress.
 */
const signature = (assistant: Message, results: ReadonlyArray<Message>): string =>
  canonicalJson({
    calls: assistant.role === "assistant" ? assistant.toolCalls.map((c) => ({ name: c.name, input: c.input })) : [],
    results: results.flatMap((m) => (m.role === "tool" ? [{ content: m.content, isError: m.isError }] : []))
  })

/**
 * How many tool steps in a row at the end of the conversation are identical
 * (the streak stops at a user message, an answer, or a different step).
 */
export const repeatStreak = (messages: ReadonlyArray<Message>): number => {
  let streak = 0
  let last: string | undefined
  let end = messages.length
  while (end > 0) {
    let start = end
    while (start > 0 && messages[start - 1].role === "tool") start -= 1
    const assistant = messages[start - 1]
    if (
      start === end || assistant === undefined || assistant.role !== "assistant" || assistant.toolCalls.length === 0
    ) break
    const current = signature(assistant, messages.slice(start, end))
    if (last !== undefined && current !== last) break
    last = current
    streak += 1
    end = start - 1
  }
  return streak
}

/** The repeat-loop halt: content-safe (no tool input or output in the message), no incident reference. */
export const loopHalted = (toolNames: ReadonlyArray<string>): Outcome =>
  failed(
    "agent_loop_halted",
    `The agent repeated the same tool call${toolNames.length > 1 ? "s" : ""} (${
      toolNames.join(", ")
    }) with the same input and the same result ${RepeatLimit} times in a row; the run was halted.`,
    "agent_loop_halted"
  )

/**
 * The cost limits that bound a run: its own budgetCents, the organization's
 * spend quota (its allowance was taken at start) and SVC_MAX_RUN_CENTS. A run
 * with any of them cannot run on a route without a price.
 */
export const costLimits = (
  plan: Pick<RunPlan, "budgetCents" | "spendAllowanceCents">,
  maxRunCents: number | null
): ReadonlyArray<string> => [
  ...(plan.budgetCents === null ? [] : [`budgetCents ${plan.budgetCents}`]),
  ...(plan.spendAllowanceCents === undefined ? [] : ["the organization's spend quota"]),
  ...(maxRunCents === null ? [] : [`the per-run ceiling of ${maxRunCents} cents`])
]

/** The platform's cost ceiling, checked after the run's own budget (a budget at or below the ceiling always stops first). */
export const overCeiling = (usage: UsageTotal, maxRunCents: number | null): boolean =>
  maxRunCents !== null && usage.costCents >= maxRunCents

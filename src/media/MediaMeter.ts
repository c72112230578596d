/**
 * What media generation costs a run: each kind's route is priced per unit
 * (an image; a second of video, music or sound effect; 1,000 characters of
 * speech) from SVC_MEDIA_PRICES, frozen in the run's plan at start. A
 * generation is checked against what the run's cost limits leave before the
 * provider is called (`budget_exceeded`, nothing sent), and charged after it:
 * its line goes in the usage receipt (`mediaGenerations`) and its cost in
 * `costCents`, so the step loop's caps (budgetCents, the spend quota,
 * SVC_MAX_RUN_CENTS) stop the run between steps as they do for tokens. A run
 * with a cost limit whose media includes an unpriced route fails before
 * inference with `pricing_unavailable`, nothing billed.
 */
import { Effect } from "effect"
import type { MediaUsage, PlannedMedia } from "../../domain/Media.ts"
import type { UsageTotal } from "../../domain/Run.ts"
import { GenerationFailed } from "./MediaHttp.ts"

export interface Meter {
  /** Fails with `budget_exceeded` when `costCents` more would pass what the run's cost limits leave. */
  readonly ensure: (costCents: number, what: string) => Effect.Effect<void, GenerationFailed>
  /** Adds a generation to the run's usage. */
  readonly charge: (line: MediaUsage) => Effect.Effect<void>
}

export interface Limits {
  readonly budgetCents: number | null
  readonly maxRunCents: number | null
  /** What the organization's spend quota had left at the run's start. */
  readonly spendAllowanceCents: number | undefined
}

/** Cents for `quantity` units of a planned route (0 when unpriced: only runs without cost limits get there). */
export const costOf = (planned: PlannedMedia, quantity: number): number =>
  planned.centsPerUnit === null ? 0 : Math.round(planned.centsPerUnit * quantity * 10_000) / 10_000

/** Why a run with cost limits (`limits`, as StepGuards.costLimits names them) cannot use its media routes. */
export const unpricedRefusal = (
  media: ReadonlyArray<PlannedMedia> | undefined,
  limits: ReadonlyArray<string>
): string | undefined => {
  const unpriced = (media ?? []).filter((m) => m.centsPerUnit === null)
  if (unpriced.length === 0 || limits.length === 0) return undefined
  return `Media route${unpriced.length === 1 ? "" : "s"} ${
    unpriced.map((m) => `'${m.route}' (${m.kind})`).join(", ")
  } ${unpriced.length === 1 ? "has" : "have"} no price (SVC_MEDIA_PRICES), so ${
    limits.join(", ")
  } cannot be enforced; the run failed before inference and nothing was billed.`
}

/** The meter of a run whose running totals are `usage` (the loop's, recorded with each checkpoint). */
export const make = (usage: { current: UsageTotal }, limits: Limits): Meter => ({
  ensure: (costCents, what) =>
    Effect.suspend(() => {
      const spent = usage.current.costCents
      const caps = [limits.budgetCents, limits.maxRunCents, limits.spendAllowanceCents].filter(
        (c): c is number => typeof c === "number"
      )
      if (caps.length === 0) return Effect.void
      const left = Math.max(0, Math.min(...caps) - spent)
      return costCents > left
        ? Effect.fail(
          new GenerationFailed({
            code: "budget_exceeded",
            message:
              `${what} would cost ${costCents} cents and the run's cost limits leave ${left}; nothing was generated.`
          })
        )
        : Effect.void
    }),
  charge: (line) =>
    Effect.sync(() => {
      usage.current = {
        ...usage.current,
        costCents: Math.round((usage.current.costCents + line.costCents) * 10_000) / 10_000,
        mediaGenerations: [...(usage.current.mediaGenerations ?? []), line]
      }
    })
})

/**
 * `base` (the usage a park recorded, which a resumed step starts from) with the generations charged
 * between `before` and `after` (by the calls the resume ran), so none goes unbilled.
 */
export const carried = (base: UsageTotal, before: UsageTotal, after: UsageTotal): UsageTotal => {
  const added = (after.mediaGenerations ?? []).slice((before.mediaGenerations ?? []).length)
  if (added.length === 0) return base
  const cost = added.reduce((total, line) => total + line.costCents, 0)
  return {
    ...base,
    costCents: Math.round((base.costCents + cost) * 10_000) / 10_000,
    mediaGenerations: [...(base.mediaGenerations ?? []), ...added]
  }
}

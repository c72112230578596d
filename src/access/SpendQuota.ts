/**
 * The spend quota of an organization per UTC calendar period
 * (SVC_ORG_SPEND_QUOTA): the metered cost (`usage.costCents`) of the runs it
 * created in the period, read from PostgreSQL, so every process sees the same
 * total. A run may start while the total is below the quota; it then carries
 * the allowance left at its start, and its loop compares its own cost with it
 * between steps, reading the total again only once its own cost reaches it.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { InsufficientQuota } from "../../domain/Errors.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { RateLimitRepo } from "../store/RateLimitRepo.ts"
import { toIso } from "../Time.ts"
import { periodOf, quotaOf, type SpendQuota as Quota } from "./LimitsConfig.ts"

/** Between steps: whether the organization's quota is used up, given the run's cost so far. */
export type QuotaCheck = (runCostCents: number) => Effect.Effect<boolean>

export class SpendQuota extends Context.Service<SpendQuota, {
  /** Cents the organization may still spend this period (undefined without a quota); refused when none are left. */
  readonly allowance: (organizationId: string) => Effect.Effect<number | undefined, InsufficientQuota>
  /** The check of one execution of a run that started with `allowanceCents` left. */
  readonly meter: (organizationId: string, allowanceCents: number | undefined) => QuotaCheck
}>()("svc/SpendQuota") {
  static readonly layer = Layer.effect(SpendQuota)(
    Effect.gen(function*() {
      const { limits } = yield* ServiceConfig
      const repo = yield* RateLimitRepo

      /** What is left of the organization's quota now, and when the period renews. */
      const left = (organizationId: string, quota: Quota) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const period = periodOf(quota.period, now)
          return {
            left: quota.cents - (yield* repo.spentSince(organizationId, toIso(period.start))),
            renewsInMs: period.end - now
          }
        })

      return {
        allowance: Effect.fn("SpendQuota.allowance")(function*(organizationId: string) {
          const quota = quotaOf(limits, organizationId)
          if (quota === undefined) return undefined
          const now = yield* left(organizationId, quota)
          if (now.left > 0) return now.left
          return yield* new InsufficientQuota({
            message:
              `The organization's spend quota (${quota.cents} cents per ${quota.period}, UTC) is used up; it renews at the start of the next ${quota.period}.`,
            retryAfterSeconds: Math.ceil(now.renewsInMs / 1000)
          })
        }),
        meter: (organizationId, allowanceCents) => {
          if (allowanceCents === undefined) return () => Effect.succeed(false)
          // The run's own cost at which to read the organization's total again.
          let readAt = allowanceCents
          return (runCostCents) =>
            Effect.gen(function*() {
              if (runCostCents < readAt) return false
              const quota = quotaOf(limits, organizationId)
              if (quota === undefined) return false
              const now = yield* left(organizationId, quota)
              if (now.left <= 0) return true
              readAt = runCostCents + now.left
              return false
            })
        }
      }
    })
  ).pipe(Layer.provide(RateLimitRepo.layer))
}

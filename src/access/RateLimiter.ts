/**
 * Request rates per API key and per organization: a token bucket each,
 * stored in PostgreSQL so every process of the cluster draws on the same
 * buckets. One call per authenticated request takes from both buckets at once
 * (one round trip; none when no rate is configured). Time is the service's
 * Clock, passed to the database, so tests drive refills with TestClock.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { RateLimited } from "../../domain/Errors.ts"
import type { Principal } from "../../domain/Principal.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { type BucketState, RateLimitRepo } from "../store/RateLimitRepo.ts"
import type { RateSpec } from "./LimitsConfig.ts"

/** What a request learns from the buckets: the `RateLimit-*` headers, and the refusal when it is over a limit. */
export interface RateDecision {
  readonly headers: Readonly<Record<string, string>>
  readonly refused: RateLimited | undefined
}

const unlimited: RateDecision = { headers: {}, refused: undefined }

interface Drawn extends BucketState {
  readonly spec: RateSpec
  readonly label: string
}

/** Seconds until `tokens` more have refilled. */
const secondsFor = (tokens: number, spec: RateSpec) => Math.max(0, Math.ceil(tokens / spec.perSecond))

/** The bucket nearest to refusing, as `RateLimit-Limit` / `-Remaining` / `-Reset` (seconds until it is full again). */
const headersOf = (tightest: Drawn): Record<string, string> => ({
  "ratelimit-limit": String(tightest.spec.burst),
  "ratelimit-remaining": String(Math.floor(tightest.remaining)),
  "ratelimit-reset": String(secondsFor(tightest.spec.burst - tightest.remaining, tightest.spec))
})

export class RateLimiter extends Context.Service<RateLimiter, {
  readonly admit: (principal: Principal) => Effect.Effect<RateDecision>
}>()("svc/RateLimiter") {
  static readonly layer = Layer.effect(RateLimiter)(
    Effect.gen(function*() {
      const { limits } = yield* ServiceConfig
      const repo = yield* RateLimitRepo
      const { keyRate, orgRate } = limits
      if (keyRate === null && orgRate === null) return { admit: () => Effect.succeed(unlimited) }
      return {
        admit: Effect.fn("RateLimiter.admit")(function*(principal: Principal) {
          const wanted = [
            ...(keyRate === null ? [] : [{ bucket: `key:${principal.keyId}`, spec: keyRate, label: "this API key" }]),
            ...(orgRate === null
              ? []
              : [{ bucket: `org:${principal.organizationId}`, spec: orgRate, label: "this organization" }])
          ]
          const states = yield* repo.take(
            wanted.map((w) => ({ bucket: w.bucket, perMs: w.spec.perSecond / 1000, burst: w.spec.burst })),
            yield* Clock.currentTimeMillis
          )
          const drawn: Array<Drawn> = wanted.flatMap((w) => {
            const state = states.find((s) => s.bucket === w.bucket)
            return state === undefined ? [] : [{ ...state, spec: w.spec, label: w.label }]
          })
          if (drawn.length === 0) return unlimited
          const tightest = drawn.reduce((a, b) => (b.remaining / b.spec.burst < a.remaining / a.spec.burst ? b : a))
          if (drawn.every((d) => d.admitted)) return { headers: headersOf(tightest), refused: undefined }
          const empty = drawn.filter((d) => d.remaining < 1)
          const wait = Math.max(1, ...empty.map((d) => secondsFor(1 - d.remaining, d.spec)))
          return {
            headers: headersOf(empty[0] ?? tightest),
            refused: new RateLimited({
              code: "rate_limited",
              message: `Too many requests for ${
                empty.map((d) => `${d.label} (${d.spec.perSecond}/s, burst ${d.spec.burst})`).join(" and ")
              }; retry after ${wait} s.`,
              retryAfterSeconds: wait
            })
          }
        })
      }
    })
  ).pipe(Layer.provide(RateLimitRepo.layer))
}

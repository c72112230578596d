/** Parsing of the limit variables and the UTC calendar periods of spend quotas. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { noLimits, parseCap, parseQuotas, parseRate, periodOf, quotaOf } from "../../../src/access/LimitsConfig.ts"

describe("limits configuration", () => {
  it.effect("rates are <per second>/<burst>; empty is off; anything else names the variable", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* parseRate("SVC_RATE_KEY", "10/20"), { perSecond: 10, burst: 20 })
      assert.deepStrictEqual(yield* parseRate("SVC_RATE_KEY", "0.5/5"), { perSecond: 0.5, burst: 5 })
      assert.isNull(yield* parseRate("SVC_RATE_KEY", ""))
      for (const bad of ["10", "0/5", "5/0", "fast/1", "-1/2"]) {
        const error = yield* Effect.flip(parseRate("SVC_RATE_ORG", bad))
        assert.strictEqual(
          error.message,
          `SVC_RATE_ORG: expected <requests per second>/<burst> with both above 0, e.g. 10/20; got '${bad}'`
        )
      }
      assert.strictEqual(yield* parseCap("SVC_MAX_ACTIVE_RUNS_PER_WORKSPACE", "3"), 3)
      assert.isNull(yield* parseCap("SVC_MAX_ACTIVE_RUNS_PER_WORKSPACE", ""))
      const zero = yield* Effect.flip(parseCap("SVC_MAX_ACTIVE_RUNS_PER_WORKSPACE", "0"))
      assert.strictEqual(zero.message, "SVC_MAX_ACTIVE_RUNS_PER_WORKSPACE: expected an integer >= 1, got '0'")
    }))

  it.effect("quotas: one for every organization, or per organization with * for the others", () =>
    Effect.gen(function*() {
      const all = { ...noLimits, spendQuotas: yield* parseQuotas("SVC_ORG_SPEND_QUOTA", "1000/day") }
      assert.deepStrictEqual(quotaOf(all, "org_any"), { cents: 1000, period: "day" })
      const mixed = {
        ...noLimits,
        spendQuotas: yield* parseQuotas("SVC_ORG_SPEND_QUOTA", "org_a=5000/month; *=1000/day")
      }
      assert.deepStrictEqual(quotaOf(mixed, "org_a"), { cents: 5000, period: "month" })
      assert.deepStrictEqual(quotaOf(mixed, "org_b"), { cents: 1000, period: "day" })
      const only = { ...noLimits, spendQuotas: yield* parseQuotas("SVC_ORG_SPEND_QUOTA", "org_a=5/month") }
      assert.isUndefined(quotaOf(only, "org_b"))
      const twice = yield* Effect.flip(parseQuotas("SVC_ORG_SPEND_QUOTA", "org_a=5/day;org_a=6/day"))
      assert.strictEqual(twice.message, "SVC_ORG_SPEND_QUOTA: 'org_a' is given twice")
      yield* Effect.flip(parseQuotas("SVC_ORG_SPEND_QUOTA", "org_a=5/week"))
      // Organization ids are org_...: a quota for another form would never apply.
      const unprefixed = yield* Effect.flip(parseQuotas("SVC_ORG_SPEND_QUOTA", "acme=5/day"))
      assert.strictEqual(
        unprefixed.message,
        "SVC_ORG_SPEND_QUOTA: 'acme' is not an organization id (org_ then letters, digits, '_' or '-')"
      )
    }))

  it("periods are UTC calendar days and months", () => {
    const t = Date.UTC(2026, 11, 31, 23, 30)
    assert.deepStrictEqual(periodOf("day", t), { start: Date.UTC(2026, 11, 31), end: Date.UTC(2027, 0, 1) })
    assert.deepStrictEqual(periodOf("month", t), { start: Date.UTC(2026, 11, 1), end: Date.UTC(2027, 0, 1) })
    assert.deepStrictEqual(periodOf("month", Date.UTC(2028, 1, 29, 12)), {
      start: Date.UTC(2028, 1, 1),
      end: Date.UTC(2028, 2, 1)
    })
  })
})

/**
 * What media generation costs a run, without a server: a call is refused
 * before it is sent when its price would pass what the tightest cost limit
 * leaves (budgetCents, SVC_MAX_RUN_CENTS, the spend quota's allowance); a
 * charge is a receipt line and part of costCents; a resumed step's charges
 * survive the park's usage; an unpriced route under a cost limit is named.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { MediaUsage } from "../../../domain/Media.ts"
import { type UsageTotal, ZeroUsage } from "../../../domain/Run.ts"
import * as MediaMeter from "../../../src/media/MediaMeter.ts"

const line = (costCents: number): MediaUsage => ({
  type: "media_generation",
  toolName: "generate_image",
  toolCallId: "tc_1",
  kind: "image",
  route: "openai:gpt-image-1",
  unit: "image",
  quantity: 1,
  costCents
})

const refusal = (meter: MediaMeter.Meter, cost: number) =>
  Effect.map(Effect.flip(meter.ensure(cost, "an image")), (e) => `${e.code}: ${e.message}`)

describe("media meter", () => {
  it.effect("the tightest cost limit bounds a call: budget, the per-run ceiling, the spend quota's allowance", () =>
    Effect.gen(function*() {
      const usage = { current: { ...ZeroUsage, costCents: 3 } }
      for (
        const limits of [
          { budgetCents: 7, maxRunCents: null, spendAllowanceCents: undefined },
          { budgetCents: null, maxRunCents: 7, spendAllowanceCents: undefined },
          { budgetCents: 100, maxRunCents: 50, spendAllowanceCents: 7 }
        ]
      ) {
        const meter = MediaMeter.make(usage, limits)
        yield* meter.ensure(4, "an image")
        assert.strictEqual(
          yield* refusal(meter, 4.5),
          "budget_exceeded: an image would cost 4.5 cents and the run's cost limits leave 4; nothing was generated."
        )
      }
      // Without limits nothing is refused.
      yield* MediaMeter.make(usage, { budgetCents: null, maxRunCents: null, spendAllowanceCents: undefined }).ensure(
        1e6,
        "a film"
      )
    }))

  it.effect("a charge is a line of the receipt and part of costCents", () =>
    Effect.gen(function*() {
      const usage: { current: UsageTotal } = { current: { ...ZeroUsage, costCents: 0.25 } }
      const meter = MediaMeter.make(usage, { budgetCents: null, maxRunCents: null, spendAllowanceCents: undefined })
      yield* meter.charge(line(4))
      yield* meter.charge(line(0.051))
      assert.strictEqual(usage.current.costCents, 4.301)
      assert.deepStrictEqual(usage.current.mediaGenerations, [line(4), line(0.051)])
    }))

  it("a resumed step's charges are carried onto the park's usage", () => {
    const park: UsageTotal = { ...ZeroUsage, costCents: 1, mediaGenerations: [line(1)] }
    const after: UsageTotal = { ...park, costCents: 5, mediaGenerations: [line(1), line(4)] }
    assert.deepStrictEqual(MediaMeter.carried(park, park, after), {
      ...park,
      costCents: 5,
      mediaGenerations: [line(1), line(4)]
    })
    assert.strictEqual(MediaMeter.carried(park, park, park), park)
  })

  it("an unpriced route under a cost limit is named; without limits it is not refused", () => {
    const media = [
      { kind: "image" as const, route: "openai:gpt-image-1", unit: "image" as const, centsPerUnit: 4 },
      { kind: "music" as const, route: "elevenlabs:music_v1", unit: "second" as const, centsPerUnit: null },
      { kind: "video" as const, route: "openai:sora-2", unit: "second" as const, centsPerUnit: null }
    ]
    assert.strictEqual(
      MediaMeter.unpricedRefusal(media, ["budgetCents 10", "the per-run ceiling of 50 cents"]),
      "Media routes 'elevenlabs:music_v1' (music), 'openai:sora-2' (video) have no price (SVC_MEDIA_PRICES), so budgetCents 10, the per-run ceiling of 50 cents cannot be enforced; the run failed before inference and nothing was billed."
    )
    assert.isUndefined(MediaMeter.unpricedRefusal(media, []))
    assert.isUndefined(MediaMeter.unpricedRefusal(media.slice(0, 1), ["budgetCents 10"]))
  })
})

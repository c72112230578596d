/**
 * Route prices as runs are metered with them: SVC_ROUTE_PRICES over the price
 * catalog, the scripted model's built-in zero, unpriced routes, and a step's
 * cost (cached input at its own rate, long inputs at their tier's rates).
 */
import { assert, describe, it } from "@effect/vitest"
import { costCents, parsePrices, routePrices } from "../../../src/model/Models.ts"

const now = Date.UTC(2026, 10, 1)

describe("route prices", () => {
  it("SVC_ROUTE_PRICES entries take an optional cached-input rate; scripted is free unless priced", () => {
    assert.deepStrictEqual(
      [...parsePrices("openai:gpt-4.1=0.1/0.4/0.01; anthropic:claude-x=3/15").entries()],
      [
        ["scripted", { inputCentsPer1k: 0, outputCentsPer1k: 0, source: "built-in" }],
        ["openai:gpt-4.1", {
          inputCentsPer1k: 0.1,
          outputCentsPer1k: 0.4,
          cachedInputCentsPer1k: 0.01,
          source: "configured"
        }],
        ["anthropic:claude-x", { inputCentsPer1k: 3, outputCentsPer1k: 15, source: "configured" }]
      ]
    )
  })

  it("SVC_ROUTE_PRICES first, then the catalog; a route neither prices has none", () => {
    const price = routePrices("openai:gpt-4o-mini=1/2;scripted=5/5", now)
    assert.deepStrictEqual(price("openai:gpt-4o-mini"), {
      inputCentsPer1k: 1,
      outputCentsPer1k: 2,
      source: "configured"
    })
    assert.deepStrictEqual(price("scripted"), { inputCentsPer1k: 5, outputCentsPer1k: 5, source: "configured" })
    assert.deepStrictEqual(price("openai:gpt-4.1"), {
      inputCentsPer1k: 0.2,
      outputCentsPer1k: 0.8,
      cachedInputCentsPer1k: 0.05,
      tiers: [],
      source: "catalog"
    })
    assert.isUndefined(price("openai:gpt-unlisted"))
    assert.isUndefined(routePrices("", now)("anthropic:claude-test"))
  })

  it("a step's cost: cached input (part of the input count) at its rate, the rest at the input and output rates", () => {
    const price = { inputCentsPer1k: 0.2, outputCentsPer1k: 0.8, cachedInputCentsPer1k: 0.05 }
    assert.strictEqual(costCents(price, 10_000, 1_000), 2 + 0.8)
    assert.strictEqual(costCents(price, 10_000, 1_000, 8_000), 0.4 + 0.4 + 0.8)
    // Without a cached rate, cached input costs what input costs.
    assert.strictEqual(costCents({ inputCentsPer1k: 0.2, outputCentsPer1k: 0.8 }, 10_000, 1_000, 8_000), 2 + 0.8)
  })

  it("a step whose input passes a tier's size is priced wholly at that tier's rates", () => {
    const price = routePrices("", now)("anthropic:claude-sonnet-4-5")
    assert.isDefined(price)
    if (price === undefined) return
    assert.strictEqual(costCents(price, 200_000, 1_000), 200 * 0.3 + 1.5)
    assert.strictEqual(costCents(price, 200_001, 1_000), (200_001 * 0.6 + 1_000 * 2.25) / 1000)
    assert.strictEqual(costCents(price, 250_000, 1_000, 50_000), (200_000 * 0.6 + 50_000 * 0.06 + 1_000 * 2.25) / 1000)
  })
})

/**
 * The price catalog as routes see it: the pinned package's version, the rates
 * it gives `openai:` and `anthropic:` models in cents per 1,000 tokens (cached
 * input and long-context tiers included), its dated price changes, and the
 * routes it does not price.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { readFileSync } from "node:fs"
import { catalogPrice, PriceCatalog } from "../../../src/model/PriceCatalog.ts"

const now = Date.UTC(2026, 10, 1)

describe("price catalog", () => {
  it("names the installed package and its version (upgrading the package means updating PriceCatalog)", () => {
    const installed = Schema.decodeUnknownSync(
      Schema.fromJsonString(Schema.Struct({ name: Schema.String, version: Schema.String }))
    )(
      readFileSync(new URL("../../../node_modules/@pydantic/genai-prices/package.json", import.meta.url), "utf8")
    )
    assert.deepStrictEqual(installed, { name: PriceCatalog.name, version: PriceCatalog.version })
    assert.match(PriceCatalog.date, /^\d{4}-\d{2}-\d{2}$/)
  })

  it.each(
    [
      ["openai:gpt-4.1", { inputCentsPer1k: 0.2, outputCentsPer1k: 0.8, cachedInputCentsPer1k: 0.05, tiers: [] }],
      ["openai:gpt-4o-mini", {
        inputCentsPer1k: 0.015,
        outputCentsPer1k: 0.06,
        cachedInputCentsPer1k: 0.0075,
        tiers: []
      }],
      // A dated model name matches its model.
      [
        "anthropic:claude-opus-4-1-20250805",
        { inputCentsPer1k: 1.5, outputCentsPer1k: 7.5, cachedInputCentsPer1k: 0.15, tiers: [] }
      ],
      // Long inputs cost more: the whole step is priced at the tier's rates.
      ["anthropic:claude-sonnet-4-5", {
        inputCentsPer1k: 0.3,
        outputCentsPer1k: 1.5,
        cachedInputCentsPer1k: 0.03,
        tiers: [{
          aboveInputTokens: 200_000,
          inputCentsPer1k: 0.6,
          outputCentsPer1k: 2.25,
          cachedInputCentsPer1k: 0.06
        }]
      }]
    ] as const
  )("%s is priced from the catalog", (route, price) => {
    assert.deepStrictEqual(catalogPrice(route, now), price)
  })

  it("a price the catalog dates is the one in force at the given time (o3 before and after its June 2025 cut)", () => {
    assert.deepInclude(catalogPrice("openai:o3", Date.UTC(2025, 0, 1)), { inputCentsPer1k: 1, outputCentsPer1k: 4 })
    assert.deepInclude(catalogPrice("openai:o3", now), { inputCentsPer1k: 0.2, outputCentsPer1k: 0.8 })
  })

  it.each([
    "openai:gpt-unlisted",
    "anthropic:claude-test",
    // A model of the other provider is not that provider's price.
    "openai:claude-sonnet-4-5",
    "anthropic:gpt-4.1",
    "scripted",
    "google:gemini-2.5-pro",
    "openai:",
    ":gpt-4.1"
  ])("%s has no catalog price", (route) => {
    assert.isUndefined(catalogPrice(route, now))
  })
})

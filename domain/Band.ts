/** Bands: stable names for a model tier; each maps to a configured route. */
import { Schema } from "effect"

export const BandNames = ["lite", "core", "frontier"] as const
export const Band = Schema.Literals(BandNames)
export type Band = typeof Band.Type

export const DefaultBand: Band = "core"

/** The price catalog a band's price was taken from: its package, pinned version and that version's date. */
export const PriceCatalogInfo = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  date: Schema.String
}).annotate({ identifier: "PriceCatalogInfo" })

/** What a band's route costs, in US cents per 1,000 tokens, and where that price comes from. */
export const BandPrice = Schema.Struct({
  inputCentsPer1k: Schema.Number,
  outputCentsPer1k: Schema.Number,
  /** Input tokens read from the provider's prompt cache; null when the price has no separate rate for them. */
  cachedInputCentsPer1k: Schema.NullOr(Schema.Number),
  /** `configured`: SVC_ROUTE_PRICES; `catalog`: the price catalog; `built-in`: the free scripted model. */
  source: Schema.Literals(["configured", "catalog", "built-in"]),
  /** The catalog, when `source` is `catalog`. */
  catalog: Schema.NullOr(PriceCatalogInfo)
}).annotate({
  identifier: "BandPrice",
  description:
    "The route's rates in US cents per 1,000 tokens (long inputs may cost more where the catalog says so) and their source."
})
export type BandPrice = typeof BandPrice.Type

/** One entry of `GET /v1/bands`. */
export const BandStatus = Schema.Struct({
  object: Schema.Literal("band"),
  name: Band,
  available: Schema.Boolean,
  strictAvailable: Schema.Boolean,
  /** Null when the band has no route, or its route no price (runs with a cost limit then fail with pricing_unavailable). */
  price: Schema.NullOr(BandPrice)
}).annotate({
  identifier: "BandStatus",
  description:
    "Whether the band has a configured model route, whether a verified strict (zero-retention) route serves it, and what that route costs."
})
export type BandStatus = typeof BandStatus.Type

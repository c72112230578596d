/** Bands: stable names for a model tier; each maps to a configured route. */
import { Schema } from "effect"

export const BandNames = ["lite", "core", "frontier"] as const
export const Band = Schema.Literals(BandNames)
export type Band = typeof Band.Type

export const DefaultBand: Band = "core"

/** One entry of `GET /v1/bands`. */
export const BandStatus = Schema.Struct({
  object: Schema.Literal("band"),
  name: Band,
  available: Schema.Boolean,
  strictAvailable: Schema.Boolean
}).annotate({
  identifier: "BandStatus",
  description:
    "Whether the band has a configured model route, and whether a verified strict (zero-retention) route serves it."
})
export type BandStatus = typeof BandStatus.Type

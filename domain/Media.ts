/**
 * Media generation (spec 2.1.1 `media`): the kinds, a kind's route as a run
 * freezes it at start, and a generation's line in the usage receipt.
 */
import { Schema } from "effect"

export const MediaKinds = ["image", "video", "speech", "music", "soundEffect"] as const
export const MediaKind = Schema.Literals(MediaKinds)
export type MediaKind = typeof MediaKind.Type

/** What one priced unit of a kind is: an image, a second of video or audio, 1,000 characters of speech. */
export const MediaUnit = Schema.Literals(["image", "second", "1k_characters"])
export type MediaUnit = typeof MediaUnit.Type

/** A media route as the run saw it at start (its price frozen with it). */
export const PlannedMedia = Schema.Struct({
  kind: MediaKind,
  route: Schema.String,
  unit: MediaUnit,
  /** US cents per unit; null: unpriced (a run with a cost limit then fails with pricing_unavailable). */
  centsPerUnit: Schema.NullOr(Schema.Number)
})
export type PlannedMedia = typeof PlannedMedia.Type

/** One generation in the usage receipt: what was made, on which route, how many units, at what cost. */
export const MediaUsage = Schema.Struct({
  type: Schema.Literal("media_generation"),
  toolName: Schema.String,
  toolCallId: Schema.String,
  kind: MediaKind,
  route: Schema.String,
  unit: MediaUnit,
  quantity: Schema.Number,
  costCents: Schema.Number
}).annotate({ identifier: "MediaUsage" })
export type MediaUsage = typeof MediaUsage.Type

/** Band availability, from configuration (SVC_BAND_*, SVC_STRICT_BANDS). */
import { Context, Effect, Layer } from "effect"
import { type Band, BandNames, type BandStatus } from "../../domain/Band.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"

export class Bands extends Context.Service<Bands, {
  readonly statuses: ReadonlyArray<BandStatus>
  readonly isAvailable: (band: Band) => boolean
  readonly isStrictAvailable: (band: Band) => boolean
}>()("svc/Bands") {
  static readonly layer = Layer.effect(Bands)(
    Effect.map(ServiceConfig, (config) => {
      const statuses = BandNames.map((name): BandStatus => ({
        object: "band",
        name,
        available: config.bands[name].route !== null,
        strictAvailable: config.bands[name].route !== null && config.bands[name].strict
      }))
      const byName = new Map(statuses.map((s) => [s.name, s]))
      return {
        statuses,
        isAvailable: (band) => byName.get(band)?.available ?? false,
        isStrictAvailable: (band) => byName.get(band)?.strictAvailable ?? false
      }
    })
  )
}

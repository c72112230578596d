/** Band availability and prices, from configuration (SVC_BAND_*, SVC_STRICT_BANDS, SVC_ROUTE_PRICES) and the price catalog. */
import { Clock, Context, Effect, Layer } from "effect"
import { type Band, BandNames, type BandPrice, type BandStatus } from "../../domain/Band.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { type RoutePrice, routePrices } from "./Models.ts"
import { PriceCatalog } from "./PriceCatalog.ts"

const shown = (price: RoutePrice): BandPrice => ({
  inputCentsPer1k: price.inputCentsPer1k,
  outputCentsPer1k: price.outputCentsPer1k,
  cachedInputCentsPer1k: price.cachedInputCentsPer1k ?? null,
  source: price.source,
  catalog: price.source === "catalog" ? PriceCatalog : null
})

export class Bands extends Context.Service<Bands, {
  readonly statuses: ReadonlyArray<BandStatus>
  readonly isAvailable: (band: Band) => boolean
  readonly isStrictAvailable: (band: Band) => boolean
}>()("svc/Bands") {
  static readonly layer = Layer.effect(Bands)(
    Effect.gen(function*() {
      const config = yield* ServiceConfig
      const priceOf = routePrices(config.routePrices, yield* Clock.currentTimeMillis)
      const statuses = BandNames.map((name): BandStatus => {
        const route = config.bands[name].route
        const price = route === null ? undefined : priceOf(route)
        return {
          object: "band",
          name,
          available: route !== null,
          strictAvailable: route !== null && config.bands[name].strict,
          price: price === undefined ? null : shown(price)
        }
      })
      const byName = new Map(statuses.map((s) => [s.name, s]))
      return {
        statuses,
        isAvailable: (band) => byName.get(band)?.available ?? false,
        isStrictAvailable: (band) => byName.get(band)?.strictAvailable ?? false
      }
    })
  )
}

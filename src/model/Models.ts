/**
 * Model routes and their prices. Routes come from the band configuration;
 * `scripted` is built in. A route's price (US cents per 1,000 tokens) comes
 * from SVC_ROUTE_PRICES when it names one, e.g.
 * `openai:gpt-4.1=0.2/0.8/0.05;scripted=0/0` (input/output[/cached input]),
 * and otherwise from the price catalog (./PriceCatalog.ts) for `openai:` and
 * `anthropic:` routes; the scripted model is free unless priced otherwise.
 * A route neither prices has no price: runs on it meter no cost, and a run
 * with a cost limit fails before inference with pricing_unavailable.
 */
import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { BandNames } from "../../domain/Band.ts"
import { routeWarnings } from "../config/BandRoutes.ts"
import { ServiceConfig, type ServiceConfigShape } from "../config/ServiceConfig.ts"
import { makeAnthropicModel } from "./AnthropicModel.ts"
import type { ModelProvider } from "./ModelProvider.ts"
import { makeOpenAiModel } from "./OpenAiModel.ts"
import { catalogPrice, PriceCatalog, type Rates, type Tier } from "./PriceCatalog.ts"
import { ScriptedModel } from "./ScriptedModel.ts"

/** A band routed to something this service cannot call; reported at start. */
export class RouteConfigError extends Data.TaggedError("RouteConfigError")<{ readonly message: string }> {}

/** `scripted`, `openai:<model>`, `anthropic:<model>`. */
export const providerFor = (config: ServiceConfigShape, route: string): ModelProvider | undefined => {
  if (route === "scripted") return ScriptedModel
  const at = route.indexOf(":")
  const kind = route.slice(0, at)
  const model = route.slice(at + 1)
  if (at <= 0 || model === "") return undefined
  if (kind === "openai") {
    return makeOpenAiModel({
      model,
      baseUrl: config.openai.baseUrl,
      apiKey: Option.getOrUndefined(config.openai.apiKey)
    })
  }
  if (kind === "anthropic") {
    return makeAnthropicModel({
      model,
      baseUrl: config.anthropic.baseUrl,
      apiKey: Option.getOrUndefined(config.anthropic.apiKey)
    })
  }
  return undefined
}

/** A route's rates; `tiers`, lowest first, replace them for a step whose input passes a size. */
export interface Price extends Rates {
  readonly tiers?: ReadonlyArray<Tier>
}

/** Where a route's price comes from: SVC_ROUTE_PRICES, the catalog, or the scripted model's built-in zero. */
export type PriceSource = "configured" | "catalog" | "built-in"

export interface RoutePrice extends Price {
  readonly source: PriceSource
}

const scriptedPrice: RoutePrice = { inputCentsPer1k: 0, outputCentsPer1k: 0, source: "built-in" }

/** SVC_ROUTE_PRICES: `<route>=<input>/<output>[/<cached input>]` entries, `;`-separated (validated by ServiceConfig). */
export const parsePrices = (raw: string): Map<string, RoutePrice> => {
  const prices = new Map<string, RoutePrice>([["scripted", scriptedPrice]])
  for (const entry of raw.split(";").map((s) => s.trim()).filter((s) => s.length > 0)) {
    const at = entry.lastIndexOf("=")
    const [input, output, cached] = entry.slice(at + 1).split("/").map(Number)
    if (at > 0 && Number.isFinite(input) && Number.isFinite(output)) {
      prices.set(entry.slice(0, at).trim(), {
        inputCentsPer1k: input,
        outputCentsPer1k: output,
        ...(cached !== undefined && Number.isFinite(cached) ? { cachedInputCentsPer1k: cached } : {}),
        source: "configured"
      })
    }
  }
  return prices
}

/**
 * Every route's price as it stands at `atMs`: SVC_ROUTE_PRICES first, then the
 * catalog; undefined when neither prices the route. Looked up once per route.
 */
export const routePrices = (raw: string, atMs: number): (route: string) => RoutePrice | undefined => {
  const configured = parsePrices(raw)
  const known = new Map<string, RoutePrice | undefined>()
  return (route) => {
    const own = configured.get(route)
    if (own !== undefined) return own
    if (!known.has(route)) {
      const found = catalogPrice(route, atMs)
      known.set(route, found === undefined ? undefined : { ...found, source: "catalog" })
    }
    return known.get(route)
  }
}

/**
 * The cost in cents of one step: `cachedInputTokens` are part of
 * `inputTokens` (both providers count them there), at the cached rate when
 * the price has one; a step whose input passes a tier's size is priced
 * wholly at that tier's rates.
 */
export const costCents = (price: Price, inputTokens: number, outputTokens: number, cachedInputTokens = 0): number => {
  const rates = price.tiers?.findLast((tier) => inputTokens > tier.aboveInputTokens) ?? price
  const cached = Math.min(cachedInputTokens, inputTokens)
  return ((inputTokens - cached) * rates.inputCentsPer1k +
    cached * (rates.cachedInputCentsPer1k ?? rates.inputCentsPer1k) +
    outputTokens * rates.outputCentsPer1k) / 1000
}

export class Models extends Context.Service<Models, {
  readonly provider: (route: string) => ModelProvider | undefined
  /** The route's price (from SVC_ROUTE_PRICES or the catalog as it stood at start), undefined when unpriced. */
  readonly price: (route: string) => RoutePrice | undefined
}>()("svc/Models") {
  static readonly layer = Layer.effect(Models)(
    Effect.gen(function*() {
      const config = yield* ServiceConfig
      const price = routePrices(config.routePrices, yield* Clock.currentTimeMillis)
      const providers = new Map<string, ModelProvider>()
      for (const band of BandNames) {
        const route = config.bands[band].route
        if (route === null) continue
        const provider = providerFor(config, route)
        if (provider === undefined) {
          return yield* new RouteConfigError({
            message:
              `SVC_BAND_${band.toUpperCase()}='${route}' is not a model route: use scripted, openai:<model> or anthropic:<model> (or none).`
          })
        }
        providers.set(route, provider)
        if (price(route) === undefined) {
          yield* Effect.logWarning(
            `SVC_BAND_${band.toUpperCase()}='${route}' has no price: neither SVC_ROUTE_PRICES nor the price catalog (${PriceCatalog.name} ${PriceCatalog.version}) lists it. ` +
              "Its runs meter no cost, and a run with a cost limit (budgetCents, a spend quota, SVC_MAX_RUN_CENTS) fails with pricing_unavailable."
          )
        }
      }
      yield* Effect.forEach(routeWarnings(config.bands, config), (warning) => Effect.logWarning(warning), {
        discard: true
      })
      return { provider: (route) => providers.get(route), price }
    })
  )
}

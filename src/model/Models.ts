/**
 * Model routes and their prices. Routes come from the band configuration;
 * `scripted` is built in. Prices (US cents per 1,000 tokens, input/output)
 * come from SVC_ROUTE_PRICES, e.g. `openai:gpt-4.1=0.2/0.8;scripted=0/0`;
 * the scripted model is free unless priced otherwise.
 */
import { Context, Data, Effect, Layer, Option } from "effect"
import { BandNames } from "../../domain/Band.ts"
import { ServiceConfig, type ServiceConfigShape } from "../config/ServiceConfig.ts"
import { makeAnthropicModel } from "./AnthropicModel.ts"
import type { ModelProvider } from "./ModelProvider.ts"
import { makeOpenAiModel } from "./OpenAiModel.ts"
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

export interface Price {
  readonly inputCentsPer1k: number
  readonly outputCentsPer1k: number
}

export const parsePrices = (raw: string): Map<string, Price> => {
  const prices = new Map<string, Price>([["scripted", { inputCentsPer1k: 0, outputCentsPer1k: 0 }]])
  for (const entry of raw.split(";").map((s) => s.trim()).filter((s) => s.length > 0)) {
    const at = entry.lastIndexOf("=")
    const [input, output] = entry.slice(at + 1).split("/").map(Number)
    if (at > 0 && Number.isFinite(input) && Number.isFinite(output)) {
      prices.set(entry.slice(0, at), { inputCentsPer1k: input, outputCentsPer1k: output })
    }
  }
  return prices
}

export const costCents = (price: Price, inputTokens: number, outputTokens: number): number =>
  (inputTokens * price.inputCentsPer1k + outputTokens * price.outputCentsPer1k) / 1000

export class Models extends Context.Service<Models, {
  readonly provider: (route: string) => ModelProvider | undefined
  readonly price: (route: string) => Price | undefined
}>()("svc/Models") {
  static readonly layer = Layer.effect(Models)(
    Effect.gen(function*() {
      const config = yield* ServiceConfig
      const prices = parsePrices(config.routePrices)
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
      }
      return {
        provider: (route) => providers.get(route),
        price: (route) => prices.get(route)
      }
    })
  )
}

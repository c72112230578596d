/**
 * Model routes and their prices. Routes come from the band configuration;
 * `scripted` is built in. Prices (US cents per 1,000 tokens, input/output)
 * come from SVC_ROUTE_PRICES, e.g. `openai:gpt-4.1=0.2/0.8;scripted=0/0`;
 * the scripted model is free unless priced otherwise.
 */
import { Context, Effect, Layer } from "effect"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import type { ModelProvider } from "./ModelProvider.ts"
import { ScriptedModel } from "./ScriptedModel.ts"

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
    Effect.map(ServiceConfig, (config) => {
      const prices = parsePrices(config.routePrices)
      return {
        provider: (route) => (route === "scripted" ? ScriptedModel : undefined),
        price: (route) => prices.get(route)
      }
    })
  )
}

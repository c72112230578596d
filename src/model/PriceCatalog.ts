/**
 * The price catalog: what an `openai:` or `anthropic:` route costs when
 * SVC_ROUTE_PRICES names no price for it. The catalog is
 * @pydantic/genai-prices, maintained by Pydantic from the providers' price
 * pages; its data ships inside the package, so nothing is fetched at run time.
 * Its version is pinned in package.json: prices change when the package is
 * upgraded, and `PriceCatalog` then names the new version and its date.
 */
import { calcPrice, type ModelPrice } from "@pydantic/genai-prices"

/** The catalog's name, its pinned version and that version's publication date (shown on `GET /v1/bands`). */
export const PriceCatalog = {
  name: "@pydantic/genai-prices",
  version: "0.1.8",
  date: "2026-09-23"
} as const

/** Rates in US cents per 1,000 tokens; `cachedInputCentsPer1k` for input read from the provider's prompt cache. */
export interface Rates {
  readonly inputCentsPer1k: number
  readonly outputCentsPer1k: number
  readonly cachedInputCentsPer1k?: number
}

/** Rates that apply to a whole step once its input passes `aboveInputTokens` (long-context pricing). */
export interface Tier extends Rates {
  readonly aboveInputTokens: number
}

/** The route prefixes the catalog prices, and the catalog's provider for each. */
const providerIds: Readonly<Record<string, string>> = { openai: "openai", anthropic: "anthropic" }

type Field = ModelPrice[string]

/** A catalog field (US dollars per million tokens, maybe tiered) at a step of `inputTokens`, in cents per 1,000. */
const centsPer1k = (field: Field, inputTokens: number): number | undefined => {
  if (field === undefined) return undefined
  if (typeof field === "number") return field / 10
  let perMillion = field.base
  for (const tier of field.tiers) if (inputTokens > tier.start) perMillion = tier.price
  return perMillion / 10
}

const ratesAt = (prices: ModelPrice, inputTokens: number): Rates | undefined => {
  const input = centsPer1k(prices["input_mtok"], inputTokens)
  const output = centsPer1k(prices["output_mtok"], inputTokens)
  const cached = centsPer1k(prices["cache_read_mtok"], inputTokens)
  if (input === undefined || output === undefined) return undefined
  return {
    inputCentsPer1k: input,
    outputCentsPer1k: output,
    ...(cached === undefined ? {} : { cachedInputCentsPer1k: cached })
  }
}

const tierStarts = (prices: ModelPrice): ReadonlyArray<number> => {
  const starts = new Set<number>()
  for (const key of ["input_mtok", "output_mtok", "cache_read_mtok"]) {
    const field = prices[key]
    if (field !== undefined && typeof field !== "number") { for (const tier of field.tiers) starts.add(tier.start) }
  }
  return [...starts].sort((a, b) => a - b)
}

/**
 * The catalog's price of `openai:<model>` or `anthropic:<model>` as it stood
 * at `atMs` (the catalog dates some price changes): its base rates and the
 * higher rates of long inputs. Undefined for other routes and for models the
 * catalog does not list.
 */
export const catalogPrice = (
  route: string,
  atMs: number
): (Rates & { readonly tiers: ReadonlyArray<Tier> }) | undefined => {
  const at = route.indexOf(":")
  const providerId = providerIds[route.slice(0, at)]
  const model = route.slice(at + 1)
  if (at <= 0 || providerId === undefined || model === "") return undefined
  const found = calcPrice({ input_tokens: 1000, output_tokens: 1000 }, model, {
    providerId,
    timestamp: new Date(atMs)
  })
  if (found === null || found.provider.id !== providerId) return undefined
  const base = ratesAt(found.model_price, 0)
  if (base === undefined) return undefined
  const tiers: Array<Tier> = []
  for (const start of tierStarts(found.model_price)) {
    const rates = ratesAt(found.model_price, start + 1)
    if (rates !== undefined) tiers.push({ aboveInputTokens: start, ...rates })
  }
  return { ...base, tiers }
}

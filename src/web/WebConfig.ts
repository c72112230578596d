/**
 * The web search provider of `capabilities.web` (docs/guide/web.md), read with
 * the rest of ServiceConfig at start (`ServiceConfig.webSearch`):
 *
 * - SVC_WEB_SEARCH: `searxng:<base url>` | `tavily[:<base url>]` | `brave[:<base url>]`;
 *   unset: no search provider (agents with `web: true` get web_fetch only).
 * - TAVILY_API_KEY / BRAVE_SEARCH_API_KEY: the hosted providers' keys (required for them).
 * - SVC_WEB_SEARCH_STRICT=1: the operator vouches that the provider keeps no query data, so
 *   strict agents may use it. A self-hosted SearXNG is strict-capable without it.
 *
 * A malformed setting stops the process.
 */
import { Config, Effect, Option, type Redacted } from "effect"
import { ConfigurationError } from "../config/ConfigurationError.ts"

export type WebSearchProvider = "searxng" | "tavily" | "brave"

export interface WebSearchConfig {
  readonly provider: WebSearchProvider
  /** Without a trailing slash. */
  readonly baseUrl: string
  /** The hosted providers' key; none for SearXNG. */
  readonly apiKey: Option.Option<Redacted.Redacted>
  /** Strict agents (dataHandling 'strict') may search through it. */
  readonly strictCapable: boolean
}

const defaults: Readonly<Record<Exclude<WebSearchProvider, "searxng">, string>> = {
  tavily: "https://api.tavily.com",
  brave: "https://api.search.brave.com"
}

const keyNames = { tavily: "TAVILY_API_KEY", brave: "BRAVE_SEARCH_API_KEY" } as const

const invalid = (message: string) => new ConfigurationError({ message: `SVC_WEB_SEARCH: ${message}` })

const form = "searxng:<base url>, tavily[:<base url>] or brave[:<base url>]"

/** `provider[:url]` as the setting spells it; the reason it is malformed otherwise. */
export const parseWebSearch = (
  raw: string
): { readonly provider: WebSearchProvider; readonly baseUrl: string } | string => {
  const colon = raw.indexOf(":")
  const name = colon < 0 ? raw : raw.slice(0, colon)
  const rest = colon < 0 ? "" : raw.slice(colon + 1)
  if (name !== "searxng" && name !== "tavily" && name !== "brave") return `expected ${form}, got '${raw}'`
  if (rest === "" && name === "searxng") return "searxng needs its base URL (searxng:https://search.example.com)"
  const base = rest === "" && name !== "searxng" ? defaults[name] : rest
  const url = URL.parse(base)
  if (url === null || !/^https?:$/.test(url.protocol) || url.username !== "" || url.password !== "") {
    return `${name}'s base URL must be an http(s) URL without credentials, got '${base}'`
  }
  return { provider: name, baseUrl: base.replace(/\/+$/, "") }
}

/** The provider from the environment: none when SVC_WEB_SEARCH is unset or empty. */
export const readWebSearchConfig = Effect.gen(function*() {
  const raw = (yield* Config.String("SVC_WEB_SEARCH").pipe(Config.withDefault(""))).trim()
  const vouched = yield* Config.Boolean("SVC_WEB_SEARCH_STRICT").pipe(Config.withDefault(false))
  if (raw === "") return Option.none<WebSearchConfig>()
  const parsed = parseWebSearch(raw)
  if (typeof parsed === "string") return yield* invalid(parsed)
  const { baseUrl, provider } = parsed
  if (provider === "searxng") {
    return Option.some<WebSearchConfig>({ provider, baseUrl, apiKey: Option.none(), strictCapable: true })
  }
  const key = yield* Config.Redacted(keyNames[provider]).pipe(Config.option)
  if (Option.isNone(key)) return yield* invalid(`${provider} needs its key in ${keyNames[provider]}`)
  return Option.some<WebSearchConfig>({ provider, baseUrl, apiKey: key, strictCapable: vouched })
})

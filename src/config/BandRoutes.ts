/**
 * The bands' model routes as configured (SVC_BAND_LITE, SVC_BAND_CORE,
 * SVC_BAND_FRONTIER): a route this service cannot call stops the start while
 * the configuration is read, before anything is created; a route that will
 * be refused by its provider (no key for the public API) is a warning.
 */
import { Option, Redacted } from "effect"
import { type Band, BandNames } from "../../domain/Band.ts"

export const defaultOpenAiBaseUrl = "https://api.openai.com/v1"
export const defaultAnthropicBaseUrl = "https://api.anthropic.com/v1"

const setting = (band: Band) => `SVC_BAND_${band.toUpperCase()}`

/** Why `route` is not a model route, in one line naming the setting; undefined when it is one. */
export const routeProblem = (band: Band, route: string): string | undefined => {
  if (route === "scripted") return undefined
  const at = route.indexOf(":")
  const kind = route.slice(0, at)
  if (at > 0 && route.length > at + 1 && (kind === "openai" || kind === "anthropic")) return undefined
  const guess = at < 0 && route !== "" ? ` (for example openai:${route} or anthropic:${route})` : ""
  return `${
    setting(band)
  }='${route}' is not a model route: use scripted, openai:<model> or anthropic:<model>${guess}, or none. ` +
    "See docs/guide/models.md."
}

interface Provider {
  readonly baseUrl: string
  readonly apiKey: Option.Option<Redacted.Redacted>
}

/**
 * One warning per band routed to a provider's public API without its key: its
 * runs would all fail. A route to another base URL (a local server such as
 * Ollama) may need no key.
 */
export const routeWarnings = (
  bands: Readonly<Record<Band, { readonly route: string | null }>>,
  providers: { readonly openai: Provider; readonly anthropic: Provider }
): ReadonlyArray<string> =>
  BandNames.flatMap((band) => {
    const route = bands[band].route
    if (route === null) return []
    const check = (kind: "openai" | "anthropic", key: string, base: string, defaultUrl: string) => {
      const provider = providers[kind]
      const keyless = Option.isNone(provider.apiKey) || Redacted.value(provider.apiKey.value) === ""
      return route.startsWith(`${kind}:`) && keyless && provider.baseUrl === defaultUrl
        ? [
          `${setting(band)}='${route}' has no ${key}: every run on the ${band} band will be refused by the provider. ` +
          `Set ${key} (or ${base} for a server that needs no key).`
        ]
        : []
    }
    return [
      ...check("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", defaultOpenAiBaseUrl),
      ...check("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", defaultAnthropicBaseUrl)
    ]
  })

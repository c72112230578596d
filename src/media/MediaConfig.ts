/**
 * The media routes of `capabilities.media` (docs/guide/media.md), read with the
 * rest of ServiceConfig at start (`ServiceConfig.media`):
 *
 * - SVC_MEDIA_IMAGE, SVC_MEDIA_VIDEO, SVC_MEDIA_SPEECH, SVC_MEDIA_MUSIC,
 *   SVC_MEDIA_SOUND_EFFECT: `<provider>:<model>` (`openai:gpt-image-1`,
 *   `openai:sora-2`, `openai:gpt-4o-mini-tts`, `elevenlabs:music_v1`,
 *   `elevenlabs:eleven_text_to_sound_v2`); unset, empty or `none`: that kind
 *   is absent. Images, video and speech go to OpenAI (OPENAI_BASE_URL /
 *   OPENAI_API_KEY, as for models), music and sound effects to ElevenLabs
 *   (ELEVENLABS_BASE_URL, default https://api.elevenlabs.io, and ELEVENLABS_API_KEY).
 * - SVC_MEDIA_PRICES: `<route>=<cents>` entries separated by `;`, the price of
 *   one unit of that route's kind (an image; a second of video, music or sound
 *   effect; 1,000 characters of speech). A route without one is unpriced.
 * - SVC_MEDIA_STRICT: the kinds whose routes are verified zero-retention
 *   (comma-separated, as capabilities spell them); only these serve strict agents.
 *
 * A malformed setting stops the process.
 */
import { Config, Effect, Option, type Redacted } from "effect"
import { type MediaKind, MediaKinds, type MediaUnit } from "../../domain/Media.ts"
import { ConfigurationError } from "../config/ConfigurationError.ts"

export { type MediaKind, MediaKinds }

export type MediaProvider = "openai" | "elevenlabs"

/** The setting of each kind, and the providers that can serve it. */
export const KindSettings: Readonly<
  Record<MediaKind, { readonly setting: string; readonly providers: ReadonlyArray<MediaProvider> }>
> = {
  image: { setting: "SVC_MEDIA_IMAGE", providers: ["openai"] },
  video: { setting: "SVC_MEDIA_VIDEO", providers: ["openai"] },
  speech: { setting: "SVC_MEDIA_SPEECH", providers: ["openai"] },
  music: { setting: "SVC_MEDIA_MUSIC", providers: ["elevenlabs"] },
  soundEffect: { setting: "SVC_MEDIA_SOUND_EFFECT", providers: ["elevenlabs"] }
}

/** What one unit of a kind is, as receipts and prices name it. */
export const UnitOf: Readonly<Record<MediaKind, MediaUnit>> = {
  image: "image",
  video: "second",
  speech: "1k_characters",
  music: "second",
  soundEffect: "second"
}

export interface MediaRoute {
  readonly kind: MediaKind
  readonly provider: MediaProvider
  readonly model: string
  /** `<provider>:<model>`, as the setting spells it. */
  readonly route: string
  /** US cents per unit (`UnitOf[kind]`); null: unpriced. */
  readonly centsPerUnit: number | null
  /** Listed in SVC_MEDIA_STRICT: strict agents may use it. */
  readonly strict: boolean
}

export interface ProviderEndpoint {
  /** Without a trailing slash. */
  readonly baseUrl: string
  readonly apiKey: Option.Option<Redacted.Redacted>
}

export interface MediaConfig {
  readonly routes: Readonly<Record<MediaKind, MediaRoute | null>>
  readonly openai: ProviderEndpoint
  readonly elevenlabs: ProviderEndpoint
}

/** No media at all (the default of a deployment without SVC_MEDIA_* settings). */
export const noMedia = (openai: ProviderEndpoint): MediaConfig => ({
  routes: { image: null, video: null, speech: null, music: null, soundEffect: null },
  openai,
  elevenlabs: { baseUrl: "https://api.elevenlabs.io", apiKey: Option.none() }
})

const invalid = (message: string) => new ConfigurationError({ message })

/** `<provider>:<model>` of `kind`; null for unset or `none`; the reason it is malformed otherwise. */
export const parseRoute = (
  kind: MediaKind,
  raw: string
): { readonly provider: MediaProvider; readonly model: string } | null | string => {
  const value = raw.trim()
  if (value === "" || value === "none") return null
  const { providers, setting } = KindSettings[kind]
  const colon = value.indexOf(":")
  const provider = colon < 0 ? value : value.slice(0, colon)
  const model = colon < 0 ? "" : value.slice(colon + 1)
  const known = providers.find((p) => p === provider)
  if (known === undefined || model === "") {
    return `${setting}: expected ${providers.map((p) => `${p}:<model>`).join(" or ")} or none, got '${value}'`
  }
  return { provider: known, model }
}

/** SVC_MEDIA_PRICES as a map from route to cents per unit; the reason it is malformed otherwise. */
export const parsePrices = (raw: string): ReadonlyMap<string, number> | string => {
  const prices = new Map<string, number>()
  for (const entry of raw.split(";").map((s) => s.trim()).filter((s) => s.length > 0)) {
    const match = /^([a-z]+:[^=\s]+)=(\d+(?:\.\d+)?)$/.exec(entry)
    if (match === null) return `SVC_MEDIA_PRICES: expected <provider>:<model>=<cents per unit>, got '${entry}'`
    prices.set(match[1], Number(match[2]))
  }
  return prices
}

/** SVC_MEDIA_STRICT as kinds; the reason it is malformed otherwise. */
export const parseStrictKinds = (raw: string): ReadonlySet<MediaKind> | string => {
  const kinds = new Set<MediaKind>()
  for (const name of raw.split(",").map((s) => s.trim()).filter((s) => s.length > 0)) {
    const kind = MediaKinds.find((k) => k === name)
    if (kind === undefined) return `SVC_MEDIA_STRICT: '${name}' is not a media kind (${MediaKinds.join(", ")})`
    kinds.add(kind)
  }
  return kinds
}

const httpBase = (name: string, raw: string) => {
  const url = URL.parse(raw)
  return url === null || !/^https?:$/.test(url.protocol)
    ? Effect.fail(invalid(`${name}: expected an http(s) URL, got '${raw}'`))
    : Effect.succeed(raw.replace(/\/+$/, ""))
}

/** The media routes from the environment; `openai` is the models' OpenAI endpoint (shared). */
export const readMediaConfig = (openai: ProviderEndpoint) =>
  Effect.gen(function*() {
    const setting = (name: string) => Config.String(name).pipe(Config.withDefault(""))
    const prices = parsePrices(yield* setting("SVC_MEDIA_PRICES"))
    if (typeof prices === "string") return yield* invalid(prices)
    const strictKinds = parseStrictKinds(yield* setting("SVC_MEDIA_STRICT"))
    if (typeof strictKinds === "string") return yield* invalid(strictKinds)
    const routes = { ...noMedia(openai).routes } as Record<MediaKind, MediaRoute | null>
    for (const kind of MediaKinds) {
      const parsed = parseRoute(kind, yield* setting(KindSettings[kind].setting))
      if (typeof parsed === "string") return yield* invalid(parsed)
      if (parsed === null) continue
      const route = `${parsed.provider}:${parsed.model}`
      routes[kind] = {
        kind,
        ...parsed,
        route,
        centsPerUnit: prices.get(route) ?? null,
        strict: strictKinds.has(kind)
      }
    }
    const elevenlabs: ProviderEndpoint = {
      baseUrl: yield* httpBase(
        "ELEVENLABS_BASE_URL",
        yield* Config.String("ELEVENLABS_BASE_URL").pipe(Config.withDefault("https://api.elevenlabs.io"))
      ),
      apiKey: yield* Config.Redacted("ELEVENLABS_API_KEY").pipe(Config.option)
    }
    return {
      routes,
      openai: { ...openai, baseUrl: openai.baseUrl.replace(/\/+$/, "") },
      elevenlabs
    } satisfies MediaConfig
  })

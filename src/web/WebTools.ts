/**
 * The tool family of `capabilities.web`: web_fetch always (it needs only the
 * guarded client), web_search when the deployment has a provider
 * (SVC_WEB_SEARCH). What a deployment offers is `offerOf`, shown on
 * `GET /v1/bands` (`web`), and `strictRefusal` is the one rule for strict data
 * handling: a strict agent, thread or run with `web: true` is refused when the
 * configured provider is not strict-capable (no search provider: web_fetch
 * only, which sends no conversation to a processor).
 */
import { Option } from "effect"
import type { Outbound } from "../outbound/Outbound.ts"
import * as ToolDef from "../tools/ToolDef.ts"
import type { ToolFamily } from "../tools/ToolFamily.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import type { WebSearchConfig, WebSearchProvider } from "./WebConfig.ts"
import { webFetch } from "./WebFetchTool.ts"
import { webSearch } from "./WebSearchTool.ts"

/** What `web: true` gives an agent on this deployment. */
export interface WebOffer {
  readonly fetch: boolean
  readonly search: WebSearchProvider | null
  /** The search provider may serve strict agents. */
  readonly strictSearch: boolean
}

export const offerOf = (search: Option.Option<WebSearchConfig>): WebOffer => ({
  fetch: true,
  search: Option.match(search, { onNone: () => null, onSome: (s) => s.provider }),
  strictSearch: Option.match(search, { onNone: () => false, onSome: (s) => s.strictCapable })
})

/** Why `web: true` cannot serve a strict agent here, or undefined. */
export const strictRefusal = (offer: WebOffer): string | undefined =>
  offer.search !== null && !offer.strictSearch
    ? `Strict data handling is required but this deployment's web search provider (${offer.search}) is not marked strict-capable (SVC_WEB_SEARCH_STRICT).`
    : undefined

/** The family of a run with `web: true`; `viewMedia`: the run has view_media, which web_fetch hands media to. */
export const family = (
  outbound: Outbound["Service"],
  search: Option.Option<WebSearchConfig>,
  options: { readonly viewMedia?: boolean } = {}
): ToolFamily =>
  ToolDef.family(
    [webFetch, ...Option.match(search, { onNone: () => [], onSome: (config) => [webSearch(config)] })],
    {
      context: () => ({
        fetch: outbound.fetch,
        fetchUntrusted: outbound.fetchUntrusted,
        viewMedia: options.viewMedia === true
      }),
      recover: (error) => ToolOutcome.failure(error.code, error.message)
    }
  )

/** Contract of `GET /v1/bands` (spec 4.11), with what the reference page says of it. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BandStatus } from "../domain/Band.ts"
import { MediaUnit } from "../domain/Media.ts"
import { Page } from "../domain/Page.ts"
import { doc } from "./ApiDocs.ts"

/** What `capabilities.web` gives an agent on this deployment (docs/guide/web.md). */
export const WebOffer = Schema.Struct({
  fetch: Schema.Boolean,
  search: Schema.NullOr(Schema.Literals(["searxng", "tavily", "brave"])),
  strictSearch: Schema.Boolean
})

/** A media kind as the deployment routes it (docs/guide/media.md); null: the kind is absent. */
const MediaKindOffer = Schema.NullOr(Schema.Struct({
  route: Schema.String,
  unit: MediaUnit,
  centsPerUnit: Schema.NullOr(Schema.Number),
  strict: Schema.Boolean
}))

/** What `capabilities.media` can enable on this deployment, kind by kind. */
export const MediaOffer = Schema.Struct({
  image: MediaKindOffer,
  video: MediaKindOffer,
  speech: MediaKindOffer,
  music: MediaKindOffer,
  soundEffect: MediaKindOffer
})

/** The bands, and what the deployment's web and media capabilities offer. */
const BandsPage = Schema.Struct({ ...Page(BandStatus).fields, web: WebOffer, media: MediaOffer })

export const BandsApi = HttpApiGroup.make("bands")
  .add(
    HttpApiEndpoint.get("list", "/v1/bands", { success: BandsPage }).annotateMerge(
      doc(
        "List the model bands",
        "The three bands (`lite`, `core`, `frontier`): whether this deployment routes each to a model (`available`), " +
          "whether that route is verified for strict data handling (`strictAvailable`), and what it costs (`price`: US cents per " +
          "1,000 tokens from SVC_ROUTE_PRICES or the bundled price catalog, whose name, version and date it names; null when the " +
          "route has no price, and then runs with a cost limit fail with pricing_unavailable). Agents, threads and runs choose a band by name. " +
          "`web` says what `capabilities.web` gives an agent here: `fetch` (web_fetch, always true), `search` (web_search's provider: " +
          "`searxng`, `tavily`, `brave`, or null when SVC_WEB_SEARCH is unset) and `strictSearch` (whether strict agents may use it). " +
          "`media` says which kinds `capabilities.media` can enable here (`image`, `video`, `speech`, `music`, `soundEffect`): " +
          "each kind's route (SVC_MEDIA_*), its priced unit (`image`, `second`, `1k_characters`), its price in US cents per unit " +
          "(SVC_MEDIA_PRICES; null when unpriced) and whether strict agents may use it (SVC_MEDIA_STRICT); null when the kind is absent."
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Bands: model tiers an agent, thread or run chooses from; the operator maps each to a model route."
  )

/** Contract of `GET /v1/bands` (spec 4.11), with what the reference page says of it. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BandStatus } from "../domain/Band.ts"
import { Page } from "../domain/Page.ts"
import { doc } from "./ApiDocs.ts"

export const BandsApi = HttpApiGroup.make("bands")
  .add(
    HttpApiEndpoint.get("list", "/v1/bands", { success: Page(BandStatus) }).annotateMerge(
      doc(
        "List the model bands",
        "The three bands (`lite`, `core`, `frontier`): whether this deployment routes each to a model (`available`), " +
          "whether that route is verified for strict data handling (`strictAvailable`), and what it costs (`price`: US cents per " +
          "1,000 tokens from SVC_ROUTE_PRICES or the bundled price catalog, whose name, version and date it names; null when the " +
          "route has no price, and then runs with a cost limit fail with pricing_unavailable). Agents, threads and runs choose a band by name."
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Bands: model tiers an agent, thread or run chooses from; the operator maps each to a model route."
  )

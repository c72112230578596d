/** Handler of `GET /v1/bands`. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ServiceConfig } from "../src/config/ServiceConfig.ts"
import { offerOf as mediaOfferOf } from "../src/media/MediaOffer.ts"
import { Bands } from "../src/model/Bands.ts"
import { offerOf } from "../src/web/WebTools.ts"
import { Api } from "./Api.ts"

export const BandsHandlers = HttpApiBuilder.group(
  Api,
  "bands",
  (handlers) =>
    Effect.gen(function*() {
      const bands = yield* Bands
      const web = offerOf((yield* ServiceConfig).webSearch)
      const media = mediaOfferOf((yield* ServiceConfig).media)
      return handlers.handle("list", () =>
        Effect.succeed({
          object: "list" as const,
          data: bands.statuses,
          hasMore: false,
          nextCursor: null,
          limit: bands.statuses.length,
          web,
          media
        }))
    })
)

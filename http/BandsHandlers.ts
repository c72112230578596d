/** Handler of `GET /v1/bands`. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Bands } from "../src/model/Bands.ts"
import { Api } from "./Api.ts"

export const BandsHandlers = HttpApiBuilder.group(
  Api,
  "bands",
  (handlers) =>
    Effect.map(Bands, (bands) =>
      handlers.handle("list", () =>
        Effect.succeed({
          object: "list" as const,
          data: bands.statuses,
          hasMore: false,
          nextCursor: null,
          limit: bands.statuses.length
        })))
)

/** Contract of `GET /v1/bands` (spec 4.11). */
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { BandStatus } from "../domain/Band.ts"
import { Page } from "../domain/Page.ts"

export const BandsApi = HttpApiGroup.make("bands").add(
  HttpApiEndpoint.get("list", "/v1/bands", { success: Page(BandStatus) })
)

/** Contract of interactions (spec 4.4). */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import {
  BatchResolveBody,
  BatchResolveResult,
  Interaction,
  InteractionKind,
  InteractionStatus,
  ResolveInteractionBody
} from "../domain/Interaction.ts"
import { ClientId } from "../domain/Ids.ts"
import { Page, PageQuery } from "../domain/Page.ts"

export const InteractionsApi = HttpApiGroup.make("interactions")
  .add(
    HttpApiEndpoint.get("list", "/v1/interactions", {
      query: {
        ...PageQuery,
        runId: Schema.optionalKey(ClientId.run),
        rootRunId: Schema.optionalKey(ClientId.run),
        status: Schema.optionalKey(InteractionStatus),
        kind: Schema.optionalKey(InteractionKind)
      },
      success: Page(Interaction)
    })
  )
  .add(HttpApiEndpoint.get("get", "/v1/interactions/:id", { params: { id: ClientId.interaction }, success: Interaction }))
  .add(
    HttpApiEndpoint.post("resolve", "/v1/interactions/:id/resolve", {
      params: { id: ClientId.interaction },
      payload: ResolveInteractionBody,
      success: Interaction
    })
  )
  .add(
    HttpApiEndpoint.post("resolveBatch", "/v1/runs/:rootRunId/interactions/resolve", {
      params: { rootRunId: ClientId.run },
      payload: BatchResolveBody,
      success: BatchResolveResult
    })
  )

/** Handlers of interactions. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BatchResolveResult, Interaction } from "../domain/Interaction.ts"
import { Interactions } from "../src/interactions/Interactions.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { idempotent } from "./Idempotent.ts"

export const InteractionsHandlers = HttpApiBuilder.group(
  Api,
  "interactions",
  (handlers) =>
    Effect.map(Interactions, (interactions) =>
      handlers
        .handle("list", ({ query }) =>
          authed((p) =>
            interactions.list(p, {
              runId: query.runId,
              rootRunId: query.rootRunId,
              status: query.status,
              kind: query.kind
            }, query)
          ))
        .handle("get", ({ params }) => authed((p) => interactions.get(p, params.id)))
        .handle(
          "resolve",
          (route) =>
            authed(idempotent(route, Interaction, (p) => interactions.resolve(p, route.params.id, route.payload)))
        )
        .handle("resolveBatch", (route) =>
          authed(
            idempotent(
              route,
              BatchResolveResult,
              (p) => interactions.resolveBatch(p, route.params.rootRunId, route.payload.items)
            )
          )))
)

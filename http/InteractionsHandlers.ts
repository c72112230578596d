/** Handlers of interactions. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Interactions } from "../src/interactions/Interactions.ts"
import { Api } from "./Api.ts"
import { CurrentPrincipal } from "./ApiMiddleware.ts"
import { envelope } from "./ErrorEnvelope.ts"

export const InteractionsHandlers = HttpApiBuilder.group(
  Api,
  "interactions",
  (handlers) =>
    Effect.map(Interactions, (interactions) =>
      handlers
        .handle("list", ({ query }) =>
          Effect.flatMap(CurrentPrincipal, (p) =>
            interactions.list(p, {
              runId: query.runId,
              rootRunId: query.rootRunId,
              status: query.status,
              kind: query.kind
            }, query)).pipe(envelope))
        .handle(
          "get",
          ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => interactions.get(p, params.id)).pipe(envelope)
        )
        .handle(
          "resolve",
          ({ params, payload }) =>
            Effect.flatMap(CurrentPrincipal, (p) => interactions.resolve(p, params.id, payload)).pipe(envelope)
        )
        .handle(
          "resolveBatch",
          ({ params, payload }) =>
            Effect.flatMap(CurrentPrincipal, (p) => interactions.resolveBatch(p, params.rootRunId, payload.items)).pipe(
              envelope
            )
        ))
)

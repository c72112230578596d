/** Handlers of interactions. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Interactions } from "../src/interactions/Interactions.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"

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
        .handle("resolve", ({ params, payload }) => authed((p) => interactions.resolve(p, params.id, payload)))
        .handle(
          "resolveBatch",
          ({ params, payload }) => authed((p) => interactions.resolveBatch(p, params.rootRunId, payload.items))
        ))
)

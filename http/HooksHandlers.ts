/** Handlers of tool approval hooks and result handlers. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ToolApprovalHooks } from "../src/interactions/ToolApprovalHooks.ts"
import { ResultHandlers } from "../src/resultHandlers/ResultHandlers.ts"
import { Api } from "./Api.ts"
import { CurrentPrincipal } from "./ApiMiddleware.ts"
import { envelope } from "./ErrorEnvelope.ts"

export const HooksHandlers = HttpApiBuilder.group(
  Api,
  "hooks",
  (handlers) =>
    Effect.map(ToolApprovalHooks, (hooks) =>
      handlers
        .handle("list", ({ query }) => Effect.flatMap(CurrentPrincipal, (p) => hooks.list(p, query)).pipe(envelope))
        .handle(
          "create",
          ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => hooks.create(p, payload)).pipe(envelope)
        )
        .handle("get", ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => hooks.get(p, params.id)).pipe(envelope))
        .handle(
          "update",
          ({ params, payload }) =>
            Effect.flatMap(CurrentPrincipal, (p) => hooks.update(p, params.id, payload)).pipe(envelope)
        )
        .handle(
          "delete",
          ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => hooks.remove(p, params.id)).pipe(envelope)
        )
        .handle(
          "rotateSecret",
          ({ params, payload }) =>
            Effect.flatMap(CurrentPrincipal, (p) => hooks.rotateSecret(p, params.id, payload.secret)).pipe(envelope)
        )
        .handle(
          "test",
          ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => hooks.test(p, params.id)).pipe(envelope)
        ))
)

export const ResultHandlersHandlers = HttpApiBuilder.group(
  Api,
  "resultHandlers",
  (handlers) =>
    Effect.map(ResultHandlers, (resultHandlers) =>
      handlers
        .handle(
          "list",
          ({ query }) => Effect.flatMap(CurrentPrincipal, (p) => resultHandlers.list(p, query)).pipe(envelope)
        )
        .handle(
          "create",
          ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => resultHandlers.create(p, payload)).pipe(envelope)
        )
        .handle(
          "get",
          ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => resultHandlers.get(p, params.id)).pipe(envelope)
        )
        .handle("update", ({ params, payload }) =>
          Effect.flatMap(CurrentPrincipal, (p) => resultHandlers.update(p, params.id, payload)).pipe(envelope))
        .handle("delete", ({ params }) =>
          Effect.flatMap(CurrentPrincipal, (p) =>
            resultHandlers.remove(p, params.id)).pipe(envelope))
        .handle("rotateSecret", ({ params, payload }) =>
          Effect.flatMap(CurrentPrincipal, (p) =>
            resultHandlers.rotateSecret(p, params.id, payload.secret)).pipe(envelope)))
)

/** Handlers of tool approval hooks and result handlers. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ToolApprovalHooks } from "../src/interactions/ToolApprovalHooks.ts"
import { ResultHandlers } from "../src/resultHandlers/ResultHandlers.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"

export const HooksHandlers = HttpApiBuilder.group(
  Api,
  "hooks",
  (handlers) =>
    Effect.map(ToolApprovalHooks, (hooks) =>
      handlers
        .handle("list", ({ query }) => authed((p) => hooks.list(p, query)))
        .handle("create", ({ payload }) => authed((p) => hooks.create(p, payload)))
        .handle("get", ({ params }) => authed((p) => hooks.get(p, params.id)))
        .handle("update", ({ params, payload }) => authed((p) => hooks.update(p, params.id, payload)))
        .handle("delete", ({ params }) => authed((p) => hooks.remove(p, params.id)))
        .handle(
          "rotateSecret",
          ({ params, payload }) => authed((p) => hooks.rotateSecret(p, params.id, payload.secret))
        )
        .handle("test", ({ params }) => authed((p) => hooks.test(p, params.id))))
)

export const ResultHandlersHandlers = HttpApiBuilder.group(
  Api,
  "resultHandlers",
  (handlers) =>
    Effect.map(ResultHandlers, (resultHandlers) =>
      handlers
        .handle("list", ({ query }) => authed((p) => resultHandlers.list(p, query)))
        .handle("create", ({ payload }) => authed((p) => resultHandlers.create(p, payload)))
        .handle("get", ({ params }) => authed((p) => resultHandlers.get(p, params.id)))
        .handle("update", ({ params, payload }) => authed((p) => resultHandlers.update(p, params.id, payload)))
        .handle("delete", ({ params }) => authed((p) => resultHandlers.remove(p, params.id)))
        .handle(
          "rotateSecret",
          ({ params, payload }) => authed((p) => resultHandlers.rotateSecret(p, params.id, payload.secret))
        ))
)

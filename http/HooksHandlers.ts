/** Handlers of tool approval hooks and result handlers. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ResultHandler } from "../domain/ResultHandler.ts"
import { HookTestResult, ToolApprovalHook } from "../domain/ToolApprovalHook.ts"
import { ToolApprovalHooks } from "../src/interactions/ToolApprovalHooks.ts"
import { ResultHandlers } from "../src/resultHandlers/ResultHandlers.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { idempotent } from "./Idempotent.ts"

export const HooksHandlers = HttpApiBuilder.group(
  Api,
  "hooks",
  (handlers) =>
    Effect.map(ToolApprovalHooks, (hooks) =>
      handlers
        .handle("list", ({ query }) => authed((p) => hooks.list(p, query)))
        .handle("create", (route) => authed(idempotent(route, ToolApprovalHook, (p) => hooks.create(p, route.payload))))
        .handle("get", ({ params }) => authed((p) => hooks.get(p, params.id)))
        .handle("update", ({ params, payload }) => authed((p) => hooks.update(p, params.id, payload)))
        .handle("delete", ({ params }) => authed((p) => hooks.remove(p, params.id)))
        .handle("rotateSecret", (route) =>
          authed(
            idempotent(route, ToolApprovalHook, (p) => hooks.rotateSecret(p, route.params.id, route.payload.secret))
          ))
        .handle("test", (route) => authed(idempotent(route, HookTestResult, (p) => hooks.test(p, route.params.id)))))
)

export const ResultHandlersHandlers = HttpApiBuilder.group(
  Api,
  "resultHandlers",
  (handlers) =>
    Effect.map(ResultHandlers, (resultHandlers) =>
      handlers
        .handle("list", ({ query }) => authed((p) => resultHandlers.list(p, query)))
        .handle(
          "create",
          (route) => authed(idempotent(route, ResultHandler, (p) => resultHandlers.create(p, route.payload)))
        )
        .handle("get", ({ params }) => authed((p) => resultHandlers.get(p, params.id)))
        .handle("update", ({ params, payload }) => authed((p) => resultHandlers.update(p, params.id, payload)))
        .handle("delete", ({ params }) => authed((p) => resultHandlers.remove(p, params.id)))
        .handle("rotateSecret", (route) =>
          authed(
            idempotent(
              route,
              ResultHandler,
              (p) => resultHandlers.rotateSecret(p, route.params.id, route.payload.secret)
            )
          )))
)

/** Handlers of tool servers and HTTP connections. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HttpConnections } from "../src/tools/HttpConnections.ts"
import { ToolServers } from "../src/tools/ToolServers.ts"
import { Api } from "./Api.ts"
import { CurrentPrincipal } from "./ApiMiddleware.ts"
import { envelope } from "./ErrorEnvelope.ts"

export const ToolServersHandlers = HttpApiBuilder.group(
  Api,
  "toolServers",
  (handlers) =>
    Effect.map(ToolServers, (servers) =>
      handlers
        .handle("list", ({ query }) => Effect.flatMap(CurrentPrincipal, (p) => servers.list(p, query)).pipe(envelope))
        .handle(
          "create",
          ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => servers.create(p, payload)).pipe(envelope)
        )
        .handle(
          "get",
          ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => servers.get(p, params.id)).pipe(envelope)
        )
        .handle("update", ({ params, payload }) =>
          Effect.flatMap(CurrentPrincipal, (p) => servers.update(p, params.id, payload)).pipe(envelope))
        .handle("delete", ({ params }) =>
          Effect.flatMap(CurrentPrincipal, (p) =>
            servers.remove(p, params.id)).pipe(envelope))
        .handle("test", ({ params }) =>
          Effect.flatMap(CurrentPrincipal, (p) =>
            servers.test(p, params.id)).pipe(envelope)))
)

export const HttpConnectionsHandlers = HttpApiBuilder.group(
  Api,
  "httpConnections",
  (handlers) =>
    Effect.map(HttpConnections, (connections) =>
      handlers
        .handle(
          "list",
          ({ query }) => Effect.flatMap(CurrentPrincipal, (p) => connections.list(p, query)).pipe(envelope)
        )
        .handle(
          "create",
          ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => connections.create(p, payload)).pipe(envelope)
        )
        .handle(
          "get",
          ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => connections.get(p, params.id)).pipe(envelope)
        )
        .handle("update", ({ params, payload }) =>
          Effect.flatMap(CurrentPrincipal, (p) => connections.update(p, params.id, payload)).pipe(envelope))
        .handle("delete", ({ params }) =>
          Effect.flatMap(CurrentPrincipal, (p) =>
            connections.remove(p, params.id)).pipe(envelope))
        .handle("test", ({ params }) =>
          Effect.flatMap(CurrentPrincipal, (p) =>
            connections.test(p, params.id)).pipe(envelope)))
)

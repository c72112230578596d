/** Handlers of tool servers and HTTP connections. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HttpConnection, HttpConnectionTestResult } from "../domain/HttpConnection.ts"
import { ToolServer, ToolServerTestResult } from "../domain/ToolServer.ts"
import { HttpConnections } from "../src/tools/HttpConnections.ts"
import { ToolServers } from "../src/tools/ToolServers.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { idempotent } from "./Idempotent.ts"

export const ToolServersHandlers = HttpApiBuilder.group(
  Api,
  "toolServers",
  (handlers) =>
    Effect.map(ToolServers, (servers) =>
      handlers
        .handle("list", ({ query }) => authed((p) => servers.list(p, query)))
        .handle("create", (route) => authed(idempotent(route, ToolServer, (p) => servers.create(p, route.payload))))
        .handle("get", ({ params }) => authed((p) => servers.get(p, params.id)))
        .handle("update", ({ params, payload }) => authed((p) => servers.update(p, params.id, payload)))
        .handle("delete", ({ params }) => authed((p) => servers.remove(p, params.id)))
        .handle("test", (route) =>
          authed(idempotent(route, ToolServerTestResult, (p) => servers.test(p, route.params.id)))))
)

export const HttpConnectionsHandlers = HttpApiBuilder.group(
  Api,
  "httpConnections",
  (handlers) =>
    Effect.map(HttpConnections, (connections) =>
      handlers
        .handle("list", ({ query }) => authed((p) => connections.list(p, query)))
        .handle("create", (route) =>
          authed(idempotent(route, HttpConnection, (p) => connections.create(p, route.payload))))
        .handle("get", ({ params }) =>
          authed((p) => connections.get(p, params.id)))
        .handle("update", ({ params, payload }) => authed((p) => connections.update(p, params.id, payload)))
        .handle("delete", ({ params }) => authed((p) => connections.remove(p, params.id)))
        .handle("test", (route) =>
          authed(idempotent(route, HttpConnectionTestResult, (p) =>
            connections.test(p, route.params.id)))))
)

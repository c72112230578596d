/**
 * The HTTP application: the API routes, `GET /healthz`, the preview URLs of
 * managed workspaces (`/v1/previews/...`, no API key), the OpenAPI document
 * at `GET /v1/openapi.json`, the reference page at `GET /docs`, and the
 * global middleware. Requires the application services.
 */
import { Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import { AgentsHandlers } from "./AgentsHandlers.ts"
import { Api } from "./Api.ts"
import { layerApiFailures, layerAuthentication } from "./ApiMiddlewareHandlers.ts"
import { BandsHandlers } from "./BandsHandlers.ts"
import { HooksHandlers, ResultHandlersHandlers } from "./HooksHandlers.ts"
import { SecretContextsHandlers, SecretsHandlers } from "./SecretsHandlers.ts"
import * as PreviewRoute from "./PreviewRoute.ts"
import * as RouterMiddleware from "./RouterMiddleware.ts"
import { InteractionsHandlers } from "./InteractionsHandlers.ts"
import { RunsHandlers } from "./RunsHandlers.ts"
import { ThreadsHandlers } from "./ThreadsHandlers.ts"
import { HttpConnectionsHandlers, ToolServersHandlers } from "./ToolsHandlers.ts"

const extraRoutes = [["GET", "/healthz"], ["GET", "/v1/openapi.json"], ["GET", "/docs"]] as const

const ApiRoutes = HttpApiBuilder.layer(Api, { openapiPath: "/v1/openapi.json" }).pipe(
  Layer.provide([
    AgentsHandlers,
    ThreadsHandlers,
    BandsHandlers,
    SecretsHandlers,
    SecretContextsHandlers,
    HooksHandlers,
    ResultHandlersHandlers,
    ToolServersHandlers,
    HttpConnectionsHandlers,
    RunsHandlers,
    InteractionsHandlers
  ]),
  Layer.provide([layerApiFailures, layerAuthentication])
)

const Health = HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))

const Docs = HttpApiScalar.layer(Api, { path: "/docs" })

export const layer = (options: { readonly maxBodyBytes: number }) =>
  Layer.mergeAll(
    ApiRoutes,
    Health,
    Docs,
    PreviewRoute.layer,
    RouterMiddleware.layer(Api, { maxBodyBytes: options.maxBodyBytes, extraRoutes, passThrough: [PreviewRoute.prefix] })
  )

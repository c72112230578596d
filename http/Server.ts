/**
 * The HTTP application: the API routes, `GET /healthz`, 404 on the paths of
 * preview URLs (`/v1/previews/...`: previews have a listener and an origin of
 * their own, http/PreviewServer.ts), the OpenAPI document
 * at `GET /v1/openapi.json`, the reference page at `GET /docs` (http/DocsRoute.ts), the browser
 * console at `GET /console` (`GET /` leads there), `GET /metrics` when SVC_METRICS=on, and the
 * global middleware (with the request metrics and the access log). Requires
 * the application services.
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { ServiceConfig, type ServiceConfigShape } from "../src/config/ServiceConfig.ts"
import { ServiceMetrics } from "../src/telemetry/ServiceMetrics.ts"
import { AgentsHandlers } from "./AgentsHandlers.ts"
import { Api } from "./Api.ts"
import { ApiKeysHandlers } from "./ApiKeysHandlers.ts"
import { layerApiFailures, layerAuthentication } from "./ApiMiddlewareHandlers.ts"
import { BandsHandlers } from "./BandsHandlers.ts"
import { BrowserProfilesHandlers } from "./BrowserProfilesHandlers.ts"
import { CodehostCallbacksHandlers, CodehostHandlers } from "./CodehostHandlers.ts"
import * as ConsoleRoute from "./ConsoleRoute.ts"
import * as DocsRoute from "./DocsRoute.ts"
import { EnvironmentRunnersHandlers, EnvironmentsHandlers } from "./EnvironmentsHandlers.ts"
import { ArtifactLinksHandlers, ArtifactsHandlers, FilesHandlers } from "./FilesHandlers.ts"
import { HooksHandlers, ResultHandlersHandlers } from "./HooksHandlers.ts"
import { InteractionsHandlers } from "./InteractionsHandlers.ts"
import * as MetricsRoute from "./MetricsRoute.ts"
import * as PreviewRoute from "./PreviewRoute.ts"
import * as RequestTelemetry from "./RequestTelemetry.ts"
import * as RouterMiddleware from "./RouterMiddleware.ts"
import { matcher } from "./RouteTable.ts"
import { RunsHandlers } from "./RunsHandlers.ts"
import { SecretContextsHandlers, SecretsHandlers } from "./SecretsHandlers.ts"
import { ThreadsHandlers } from "./ThreadsHandlers.ts"
import { HttpConnectionsHandlers, ToolServersHandlers } from "./ToolsHandlers.ts"
import { WorkspaceFilesHandlers } from "./WorkspaceFilesHandlers.ts"

/** Routes outside the HttpApi; `/metrics` only when it is served. */
const extraRoutes = (config: ServiceConfigShape): ReadonlyArray<readonly [string, string]> => [
  ["GET", "/healthz"],
  ["GET", "/v1/openapi.json"],
  ["GET", "/"],
  ...DocsRoute.routes,
  ...ConsoleRoute.routes,
  ["*", `${PreviewRoute.prefix}*`],
  ...(config.telemetry.metrics.enabled ? [["GET", MetricsRoute.path] as const] : [])
]

/** Every route template the service answers (span names). */
export const routes = (config: ServiceConfigShape) => matcher(Api, extraRoutes(config))

const ApiRoutes = HttpApiBuilder.layer(Api, { openapiPath: "/v1/openapi.json" }).pipe(
  Layer.provide([
    AgentsHandlers,
    ThreadsHandlers,
    WorkspaceFilesHandlers,
    BandsHandlers,
    SecretsHandlers,
    SecretContextsHandlers,
    HooksHandlers,
    ResultHandlersHandlers,
    ToolServersHandlers,
    HttpConnectionsHandlers,
    CodehostHandlers,
    CodehostCallbacksHandlers,
    RunsHandlers,
    InteractionsHandlers,
    FilesHandlers,
    ArtifactsHandlers,
    ArtifactLinksHandlers,
    ApiKeysHandlers,
    EnvironmentsHandlers,
    EnvironmentRunnersHandlers,
    BrowserProfilesHandlers
  ]),
  Layer.provide([layerApiFailures, layerAuthentication])
)

const Health = HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))

/** `/` leads to the console. */
const Root = HttpRouter.add("GET", "/", HttpServerResponse.redirect(ConsoleRoute.path, { status: 302 }))

export const layer = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    const metrics = yield* ServiceMetrics
    const observe = RequestTelemetry.observerOf(metrics, config)
    return Layer.mergeAll(
      ApiRoutes,
      Health,
      Root,
      DocsRoute.layer,
      ConsoleRoute.layer,
      PreviewRoute.elsewhere,
      MetricsRoute.layer,
      RouterMiddleware.layer(Api, {
        maxBodyBytes: config.maxBodyBytes,
        extraRoutes: extraRoutes(config),
        multipartPaths: ["/v1/files"],
        ...(observe === undefined ? {} : { observe })
      })
    )
  })
)

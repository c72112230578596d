/**
 * The previews' own listener (SVC_PREVIEW_PORT): `/v1/previews/<token>/...`
 * (http/PreviewRoute.ts) and nothing else, on an origin of its own so that a
 * page a workspace wrote never shares the API's and the console's. Every
 * answer has its `X-Request-Id`; anything but a preview path is 404
 * `route_not_found` in the envelope. Requests are counted in the metrics like
 * the API's; preview paths stay out of the access log (their URL is the grant).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Duration, Effect, Layer } from "effect"
import { HttpMiddleware, HttpRouter } from "effect/http"
import { ServiceConfig, type ServiceConfigShape } from "../src/config/ServiceConfig.ts"
import { ServiceMetrics } from "../src/telemetry/ServiceMetrics.ts"
import { PreviewOrigin } from "../src/workspace/PreviewOrigin.ts"
import type * as Listener from "./Listener.ts"
import * as PreviewRoute from "./PreviewRoute.ts"
import * as RequestTelemetry from "./RequestTelemetry.ts"
import * as RouterMiddleware from "./RouterMiddleware.ts"
import { matcher } from "./RouteTable.ts"

/** No HttpApi on this listener: its one route is outside any. */
const noApi = { groups: {} }

const previewRoutes: ReadonlyArray<readonly [string, string]> = [["*", `${PreviewRoute.prefix}*`]]

/** Its route templates (span names). */
export const routes = matcher(noApi, previewRoutes)

const routesLayer = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    const metrics = yield* ServiceMetrics
    const observe = RequestTelemetry.observerOf(metrics, config)
    return Layer.mergeAll(
      PreviewRoute.layer,
      RouterMiddleware.layer(noApi, {
        maxBodyBytes: config.maxBodyBytes,
        extraRoutes: [],
        passThrough: [PreviewRoute.prefix],
        ...(observe === undefined ? {} : { observe })
      })
    )
  })
)

/**
 * The routes served on `listener`, bound on HOST:SVC_PREVIEW_PORT; PreviewOrigin
 * is told the port bound (SVC_PREVIEW_PORT=0: any free one) and the origin is
 * logged. Stopping is the caller's (Listener.layerStop, with the API's).
 */
export const layer = (listener: Listener.Listener, config: ServiceConfigShape) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const app = yield* HttpRouter.toHttpEffect(routesLayer)
      const server = yield* NodeHttpServer.make(() => listener.server, {
        port: config.previews.port,
        host: config.host,
        gracefulShutdownTimeout: Duration.millis(config.shutdownGraceMs)
      })
      yield* server.serve(app).pipe(
        Effect.provideService(HttpMiddleware.SpanNameGenerator, RequestTelemetry.spanName(routes))
      )
      const origin = yield* PreviewOrigin
      if (server.address._tag !== "UnixPathAddress") yield* origin.bound(server.address.port)
      yield* Effect.log(`Previews served on ${yield* origin.current}`)
    })
  )

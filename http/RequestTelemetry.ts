/**
 * What every answered request leaves behind: a count and a latency in the
 * metrics (by route template, never the raw path), one line in the access log
 * (unless SVC_QUIET=1; preview URLs never, their path is the grant), and the
 * name of its server span, `<METHOD> <route>` as the OTel HTTP conventions
 * name it (the router adds `http.route` and the status code).
 */
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { ServiceConfigShape } from "../src/config/ServiceConfig.ts"
import type { ServiceMetrics } from "../src/telemetry/ServiceMetrics.ts"
import { prefix as previewPrefix } from "./PreviewRoute.ts"
import type { Answered } from "./RouterMiddleware.ts"
import type { RouteMatcher } from "./RouteTable.ts"

/**
 * The observer a listener installs: none when nothing would be counted or logged
 * (SVC_QUIET=1 and no metrics), so a request costs no work for it. Previews are never access-logged.
 */
export const observerOf = (
  metrics: ServiceMetrics["Service"],
  config: Pick<ServiceConfigShape, "quiet" | "telemetry">
): ((answered: Answered) => Effect.Effect<void>) | undefined =>
  metrics.enabled || !config.quiet
    ? observer(metrics, {
      accessLog: !config.quiet,
      json: config.telemetry.logFormat === "json",
      unlogged: [previewPrefix]
    })
    : undefined

/** `GET /v1/agents/:id 200 3.2 ms req_...`: the route template, or the path when none matched. */
export const accessLine = (answered: Answered): string =>
  `${answered.method} ${answered.route === "unmatched" ? answered.path : answered.route} ${answered.status} ${
    Math.round(answered.seconds * 1e4) / 10
  } ms ${answered.requestId}`

/**
 * One line per answered request. As text, everything is in the line itself (annotations
 * would print as a multi-line object); as JSON, the same facts are fields a shipper reads.
 */
export const observer = (
  metrics: ServiceMetrics["Service"],
  options: { readonly accessLog: boolean; readonly json: boolean; readonly unlogged: ReadonlyArray<string> }
) =>
(answered: Answered): Effect.Effect<void> => {
  metrics.recordRequest(answered.method, answered.route, answered.status, answered.seconds)
  if (!options.accessLog || options.unlogged.some((prefix) => answered.path.startsWith(prefix))) return Effect.void
  if (!options.json) return Effect.log(accessLine(answered))
  return Effect.log("Sent HTTP response").pipe(
    // The first three in the order Effect's own access log used (log readers match on them).
    Effect.annotateLogs({
      "http.method": answered.method,
      "http.url": answered.path,
      "http.status": answered.status,
      "http.route": answered.route,
      duration_ms: Math.round(answered.seconds * 1e6) / 1e3,
      request_id: answered.requestId
    })
  )
}

/** The server span's name: the method and the route template when one matches, else the method alone. */
export const spanName = (routes: RouteMatcher) => (request: HttpServerRequest.HttpServerRequest): string => {
  const path = new URL(request.url, "http://localhost").pathname
  const route = routes.route(request.method, path)
  return route === undefined ? request.method : `${request.method} ${route}`
}

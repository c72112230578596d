/**
 * What every answered request leaves behind: a count and a latency in the
 * metrics (by route template, never the raw path), a line in the access log
 * (unless SVC_QUIET=1; preview URLs never, their path is the grant), and the
 * name of its server span, `<METHOD> <route>` as the OTel HTTP conventions
 * name it (the router adds `http.route` and the status code).
 */
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
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
  quiet: boolean
): ((answered: Answered) => Effect.Effect<void>) | undefined =>
  metrics.enabled || !quiet ? observer(metrics, { accessLog: !quiet, unlogged: [previewPrefix] }) : undefined

export const observer = (
  metrics: ServiceMetrics["Service"],
  options: { readonly accessLog: boolean; readonly unlogged: ReadonlyArray<string> }
) =>
(answered: Answered): Effect.Effect<void> => {
  metrics.recordRequest(answered.method, answered.route, answered.status, answered.seconds)
  if (!options.accessLog || options.unlogged.some((prefix) => answered.path.startsWith(prefix))) return Effect.void
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

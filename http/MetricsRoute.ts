/**
 * `GET /metrics`: the service's metrics in the Prometheus text exposition
 * format (src/telemetry/ServiceMetrics.ts), served only with SVC_METRICS=on;
 * otherwise there is no such route (404 `route_not_found`, as for any unknown
 * path). With SVC_METRICS_TOKEN a scrape must send `Authorization: Bearer
 * <token>`, or it is refused with 401 `invalid_metrics_token`. API keys do
 * not open it: a scraper needs no access to any workspace.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash, timingSafeEqual } from "node:crypto"
import { ServiceConfig } from "../src/config/ServiceConfig.ts"
import { ServiceMetrics } from "../src/telemetry/ServiceMetrics.ts"
import { CurrentRequestId, rawEnvelope } from "./ErrorEnvelope.ts"

export const path = "/metrics"

const digest = (text: string) => createHash("sha256").update(text).digest()

/** Compares digests, so the time taken says nothing about the token. */
const sameToken = (expected: Redacted.Redacted, authorization: string | undefined): boolean => {
  const match = /^Bearer (.+)$/.exec(authorization ?? "")
  return match !== null && timingSafeEqual(digest(match[1]), digest(Redacted.value(expected)))
}

const refused = Effect.map(CurrentRequestId, (requestId) =>
  HttpServerResponse.setHeader(
    rawEnvelope(
      401,
      "invalid_metrics_token",
      "Missing or wrong metrics token: send 'Authorization: Bearer <SVC_METRICS_TOKEN>'.",
      requestId
    ),
    "www-authenticate",
    "Bearer"
  ))

/** The route when SVC_METRICS=on; nothing otherwise. */
export const layer: Layer.Layer<never, never, HttpRouter.HttpRouter | ServiceConfig | ServiceMetrics> = Layer.unwrap(
  Effect.gen(function*() {
    const { enabled, token } = (yield* ServiceConfig).telemetry.metrics
    if (!enabled) return Layer.empty
    const metrics = yield* ServiceMetrics
    const handler = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (Option.isSome(token) && !sameToken(token.value, request.headers["authorization"])) return yield* refused
      return HttpServerResponse.text(yield* metrics.exposition, {
        contentType: "text/plain; version=0.0.4; charset=utf-8"
      })
    })
    return HttpRouter.add("GET", path, handler)
  })
)

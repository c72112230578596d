/**
 * OTLP/HTTP export of traces and metrics, through Effect's own tracer and
 * exporters, when OTEL_EXPORTER_OTLP_ENDPOINT is set. Tracing is otherwise
 * off (src/main.ts turns it off: spans nobody reads cost a seventh of a
 * turn's CPU); this layer turns it on, with timing, for everything built
 * above it. Every span and metric carries the resource `service.name`
 * (OTEL_SERVICE_NAME, default `agent-service`), `service.instance.id` (this
 * process's node id) and whatever OTEL_RESOURCE_ATTRIBUTES adds.
 */
import { Duration, Effect, Layer, Metric, Option, Redacted, References } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpExporter, OtlpMetrics, OtlpSerialization, OtlpTracer } from "effect/observability"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import type { OtlpConfig } from "../config/TelemetryConfig.ts"
import { NodeId } from "../NodeId.ts"
import { MetricsRegistry } from "./ServiceMetrics.ts"

/** How long a stopping process waits for its last spans and metrics to be accepted. */
const shutdownTimeout = Duration.seconds(3)

/** `<endpoint>/v1/<signal>`, as the OTel specification builds signal URLs from the base endpoint. */
export const signalUrl = (endpoint: string, signal: "traces" | "metrics"): string => {
  const url = new URL(endpoint)
  url.pathname += `${url.pathname.endsWith("/") ? "" : "/"}v1/${signal}`
  return url.toString()
}

const exporters = (otlp: OtlpConfig, nodeId: string) =>
  Effect.map(MetricsRegistry, (registry) => {
    const resource = { serviceName: otlp.serviceName, attributes: { "service.instance.id": nodeId } }
    const headers = Object.fromEntries(otlp.headers.map(([name, value]) => [name, Redacted.value(value)]))
    const tracer = OtlpTracer.layer({
      url: signalUrl(otlp.endpoint, "traces"),
      resource,
      headers,
      exportInterval: Duration.millis(otlp.tracesExportMs),
      shutdownTimeout
    })
    // The exporter reads the registry it is built with: the service's own.
    const metrics = OtlpMetrics.layer({
      url: signalUrl(otlp.endpoint, "metrics"),
      resource,
      headers,
      exportInterval: Duration.millis(otlp.metricsExportMs),
      shutdownTimeout
    }).pipe(Layer.provide(Layer.succeed(Metric.MetricRegistry)(registry)))
    return Layer.mergeAll(
      tracer,
      metrics,
      Layer.succeed(References.TracerEnabled)(true),
      Layer.succeed(References.TracerTimingEnabled)(true)
    ).pipe(
      Layer.provide(otlp.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
      Layer.provide(FetchHttpClient.layer)
    )
  })

/**
 * The exporters when configured; otherwise only a Flusher with nothing to
 * flush. Tests flush it to see what was exported without waiting.
 */
export const layer: Layer.Layer<OtlpExporter.Flusher, never, ServiceConfig | NodeId | MetricsRegistry> = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    const nodeId = yield* NodeId
    return yield* Option.match(config.telemetry.otlp, {
      onNone: () => Effect.succeed(OtlpExporter.layerFlusher),
      onSome: (otlp) => exporters(otlp, nodeId)
    })
  })
)

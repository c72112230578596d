/**
 * What the service tells the outside about itself, read from the environment
 * with the rest of ServiceConfig: OTLP export (the standard OTEL_* variables),
 * the Prometheus endpoint (SVC_METRICS, SVC_METRICS_TOKEN) and the log format
 * (SVC_LOG_FORMAT). Every variable is in the README's telemetry section.
 */
import { Config, Effect, Option, Redacted, Schema } from "effect"
import { ConfigurationError } from "./ConfigurationError.ts"

export interface OtlpConfig {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; signals go to `/v1/traces` and `/v1/metrics` below it. */
  readonly endpoint: string
  /** OTEL_EXPORTER_OTLP_PROTOCOL: `http/protobuf` (the OTel default) or `http/json`. */
  readonly protocol: "http/protobuf" | "http/json"
  /** OTEL_EXPORTER_OTLP_HEADERS: `k=v,k2=v2` (values percent-decoded); they often carry a vendor token. */
  readonly headers: ReadonlyArray<readonly [name: string, value: Redacted.Redacted]>
  /**
   * OTEL_SERVICE_NAME; `agent-service` when neither it nor `service.name` in
   * OTEL_RESOURCE_ATTRIBUTES is set (the other resource attributes are read by the exporter).
   */
  readonly serviceName: string | undefined
  /** OTEL_BSP_SCHEDULE_DELAY: milliseconds between span exports. */
  readonly tracesExportMs: number
  /** OTEL_METRIC_EXPORT_INTERVAL: milliseconds between metric exports. */
  readonly metricsExportMs: number
}

export interface TelemetryConfig {
  /** Set when OTEL_EXPORTER_OTLP_ENDPOINT is (and OTEL_SDK_DISABLED is not true). */
  readonly otlp: Option.Option<OtlpConfig>
  /** SVC_METRICS=on serves `GET /metrics`; SVC_METRICS_TOKEN then requires `Authorization: Bearer <token>`. */
  readonly metrics: { readonly enabled: boolean; readonly token: Option.Option<Redacted.Redacted> }
  /** SVC_LOG_FORMAT: `text` (Effect's default logger) or `json` (one JSON object a line on stdout). */
  readonly logFormat: "text" | "json"
}

/** Nothing exported, no /metrics, text logs: the defaults. */
export const noTelemetry: TelemetryConfig = {
  otlp: Option.none(),
  metrics: { enabled: false, token: Option.none() },
  logFormat: "text"
}

export const DefaultServiceName = "agent-service"

const positiveMs = (name: string, fallback: number) =>
  Effect.flatMap(
    Config.Int(name).pipe(Config.withDefault(fallback)),
    (ms) =>
      ms >= 1
        ? Effect.succeed(ms)
        : Effect.fail(new ConfigurationError({ message: `${name} must be at least 1 (milliseconds), got ${ms}` }))
  )

const readOtlp = Effect.gen(function*() {
  const disabled = yield* Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false))
  const endpoint = yield* Config.String("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.option)
  if (disabled || Option.isNone(endpoint) || endpoint.value.trim() === "") return Option.none<OtlpConfig>()
  if (!URL.canParse(endpoint.value) || !["http:", "https:"].includes(new URL(endpoint.value).protocol)) {
    return yield* new ConfigurationError({
      message: `OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (http://collector:4318), got '${endpoint.value}'`
    })
  }
  const protocol = yield* Config.String("OTEL_EXPORTER_OTLP_PROTOCOL").pipe(Config.withDefault("http/protobuf"))
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    return yield* new ConfigurationError({
      message:
        `OTEL_EXPORTER_OTLP_PROTOCOL: this service exports over OTLP/HTTP, 'http/protobuf' or 'http/json'; got '${protocol}'`
    })
  }
  const headers = yield* Config.Record(Schema.String, Schema.StringFromUriComponent, "OTEL_EXPORTER_OTLP_HEADERS").pipe(
    Config.withDefault({}),
    Effect.mapError(() =>
      new ConfigurationError({ message: "OTEL_EXPORTER_OTLP_HEADERS: expected name=value pairs separated by commas" })
    )
  )
  const named = yield* Config.String("OTEL_SERVICE_NAME").pipe(Config.option)
  const attributes = yield* Config.String("OTEL_RESOURCE_ATTRIBUTES").pipe(Config.withDefault(""))
  const nameInAttributes = attributes.split(",").some((entry) => entry.split("=")[0].trim() === "service.name")
  return Option.some<OtlpConfig>({
    endpoint: endpoint.value.trim(),
    protocol,
    headers: Object.entries(headers).map(([name, value]) => [name, Redacted.make(value)] as const),
    serviceName: Option.getOrElse(named, () => (nameInAttributes ? undefined : DefaultServiceName)),
    tracesExportMs: yield* positiveMs("OTEL_BSP_SCHEDULE_DELAY", 5_000),
    metricsExportMs: yield* positiveMs("OTEL_METRIC_EXPORT_INTERVAL", 60_000)
  })
})

export const readTelemetry = Effect.gen(function*() {
  const otlp = yield* readOtlp
  const enabled = yield* Config.Boolean("SVC_METRICS").pipe(Config.withDefault(false))
  const token = yield* Config.Redacted("SVC_METRICS_TOKEN").pipe(Config.option)
  if (Option.isSome(token) && !enabled) {
    return yield* new ConfigurationError({
      message: "SVC_METRICS_TOKEN guards /metrics, which is off: set SVC_METRICS=on too (or unset the token)"
    })
  }
  if (Option.isSome(token) && Redacted.value(token.value).length < 16) {
    return yield* new ConfigurationError({ message: "SVC_METRICS_TOKEN must be at least 16 characters" })
  }
  const logFormat = yield* Config.String("SVC_LOG_FORMAT").pipe(Config.withDefault("text"))
  if (logFormat !== "text" && logFormat !== "json") {
    return yield* new ConfigurationError({ message: `SVC_LOG_FORMAT must be 'text' or 'json', got '${logFormat}'` })
  }
  return { otlp, metrics: { enabled, token }, logFormat } satisfies TelemetryConfig
})

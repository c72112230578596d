/**
 * SVC_LOG_FORMAT=json: every log line is one JSON object on stdout, for a
 * log shipper to read without parsing text:
 *
 *   {"timestamp":"...","level":"INFO","message":"Sent HTTP response","node_id":"node_...",
 *    "request_id":"req_...","trace_id":"...","span_id":"...","annotations":{"http.status":200,...}}
 *
 * `request_id`, `run_id` and `thread_id` come from the log annotations, lifted
 * to the top level; `trace_id` / `span_id` name the current span (when traces
 * are exported, the line belongs to that trace); `cause` is the failure's
 * text when the line reports one. No secret value is ever written: `Redacted`
 * values print as `<redacted>`, and the secrets the service was configured
 * with (provider and metrics keys, master keys, seeded API keys, the database
 * password, OTLP headers) are replaced wherever they would appear, a
 * provider's error message echoing its key included.
 */
import { Context, Effect, Formatter, Layer, Logger, Option, Redacted, Tracer } from "effect"
import { ServiceConfig, type ServiceConfigShape } from "../config/ServiceConfig.ts"
import { NodeId } from "../NodeId.ts"

/** Annotations promoted to top-level fields of the line. */
const lifted = ["request_id", "run_id", "thread_id"] as const

/** Shorter strings are not scrubbed: they would match ordinary text. */
const minSecretLength = 8

const safeDecode = Option.liftThrowable(decodeURIComponent)

/** Every secret value in the configuration, in the forms it can take inside a JSON line. */
export const configuredSecrets = (config: ServiceConfigShape): ReadonlyArray<string> => {
  const values: Array<Redacted.Redacted> = [
    ...Option.toArray(config.openai.apiKey),
    ...Option.toArray(config.anthropic.apiKey),
    ...Option.toArray(config.masterKey),
    ...config.previousMasterKeys,
    ...config.seedKeys.map((k) => k.key),
    ...Option.toArray(config.telemetry.metrics.token),
    ...Option.toArray(config.codehost).flatMap((app) => [app.privateKey, app.clientSecret, app.webhookSecret]),
    ...Option.toArray(config.telemetry.otlp).flatMap((otlp) => otlp.headers.map(([, value]) => value))
  ]
  const plain = values.map(Redacted.value)
  for (const url of Option.toArray(config.databaseUrl)) {
    // The URL's password as written (percent-encoded) and as the database sees it.
    const written = URL.canParse(Redacted.value(url)) ? new URL(Redacted.value(url)).password : ""
    plain.push(written, Option.getOrElse(safeDecode(written), () => written))
  }
  const forms = plain.filter((s) => s.length >= minSecretLength).flatMap((s) => [s, JSON.stringify(s).slice(1, -1)])
  // Longest first, so a secret containing another is replaced whole.
  return [...new Set(forms)].sort((a, b) => b.length - a.length)
}

export const scrub = (secrets: ReadonlyArray<string>) => (text: string): string =>
  secrets.reduce((out, secret) => (out.includes(secret) ? out.split(secret).join("<redacted>") : out), text)

/** The JSON line of one log event (without its newline). */
export const jsonLine = (options: { readonly nodeId: string | undefined; readonly secrets: ReadonlyArray<string> }) => {
  const clean = scrub(options.secrets)
  return Logger.make((event): string => {
    const structured = Logger.formatStructured.log(event)
    const annotations: Record<string, unknown> = { ...structured.annotations }
    const line: Record<string, unknown> = {
      timestamp: structured.timestamp,
      level: structured.level,
      message: structured.message
    }
    if (options.nodeId !== undefined) line.node_id = options.nodeId
    for (const key of lifted) {
      if (key in annotations) {
        line[key] = annotations[key]
        delete annotations[key]
      }
    }
    const span = Context.getOrUndefined(event.fiber.context, Tracer.ParentSpan)
    if (span !== undefined && span.sampled) {
      line.trace_id = span.traceId
      line.span_id = span.spanId
    }
    if (structured.cause !== undefined) line.cause = structured.cause
    if (Object.keys(annotations).length > 0) line.annotations = annotations
    return clean(Formatter.formatJson(line))
  })
}

/** Replaces the loggers of everything built above it when SVC_LOG_FORMAT=json. */
export const layer: Layer.Layer<never, never, ServiceConfig | NodeId> = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    if (config.telemetry.logFormat !== "json") return Layer.empty
    return layerJson({ nodeId: yield* NodeId, secrets: configuredSecrets(config) })
  })
)

/** JSON lines on stdout (the supervisor of SVC_PROCESSES workers uses it without a node id). */
export const layerJson = (options: { readonly nodeId: string | undefined; readonly secrets: ReadonlyArray<string> }) =>
  Logger.layer([Logger.withConsoleLog(jsonLine(options))])

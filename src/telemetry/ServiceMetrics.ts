/**
 * The service's metrics, in a registry of its own (so two services in one
 * process, as in the tests, never mix their counts): requests by route and
 * status with their latency, model tokens by route, and the run gauges, read
 * from the database when someone looks (a scrape of /metrics, an OTLP
 * export). Recording costs nothing when neither /metrics nor OTLP is on.
 */
import { Context, Duration, Effect, Layer, Metric, Option, Schedule } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { RunGauges } from "../store/RunGauges.ts"

/** Prometheus' default buckets, in seconds: from 5 ms (a cached read) to 10 s (a slow tool test). */
const latencyBoundaries = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const requests = Metric.counter("svc_http_requests_total", {
  description: "HTTP requests answered, by method, route template and status code.",
  incremental: true
})
const latency = Metric.histogram("svc_http_request_duration_seconds", {
  description:
    "Time from a request's arrival to its response headers (streams: to the start of the stream), by method and route.",
  boundaries: latencyBoundaries
})
const tokens = Metric.counter("svc_model_tokens_total", {
  description: "Model tokens metered by this process, by model route and type (input or output).",
  incremental: true
})
const runsActive = Metric.gauge("svc_runs_active", {
  description: "Runs preparing or running, in the whole deployment."
})
const runsQueued = Metric.gauge("svc_runs_queued", {
  description: "Runs accepted but not started yet, in the whole deployment."
})
const runsParked = Metric.gauge("svc_runs_parked", {
  description: "Runs waiting on a person, by what they wait for (approval or input), in the whole deployment."
})
const followupsHeld = Metric.gauge("svc_followups_held", {
  description: "Messages held for a busy thread until its run's next turn boundary, in the whole deployment."
})

/** The service's metric registry (not the process-wide default one). */
export class MetricsRegistry extends Context.Service<MetricsRegistry, Metric.MetricRegistry>()("svc/MetricsRegistry") {
  static readonly layer = Layer.sync(MetricsRegistry)((): Metric.MetricRegistry => new Map())
}

export class ServiceMetrics extends Context.Service<ServiceMetrics, {
  /** Whether anything reads the metrics (SVC_METRICS=on or OTLP export). */
  readonly enabled: boolean
  readonly recordRequest: (method: string, route: string, status: number, seconds: number) => void
  readonly recordTokens: (route: string, input: number, output: number) => void
  /** Reads the run gauges into the registry (one query). */
  readonly refreshGauges: Effect.Effect<void>
  /** Everything in the Prometheus text exposition format, the gauges read afresh. */
  readonly exposition: Effect.Effect<string>
}>()("svc/ServiceMetrics") {
  static readonly layer = Layer.effect(ServiceMetrics)(
    Effect.gen(function*() {
      const config = yield* ServiceConfig
      const gauges = yield* RunGauges
      const registry = yield* MetricsRegistry
      const context = Context.make(Metric.MetricRegistry, registry)
      const enabled = config.telemetry.metrics.enabled || Option.isSome(config.telemetry.otlp)
      // One metric value per series, made once: attributes are fixed per series.
      const series = new Map<string, Metric.Metric<number, unknown>>()
      const seriesOf = <S>(metric: Metric.Metric<number, S>, attributes: Record<string, string>) => {
        const key = `${metric.id}${JSON.stringify(attributes)}`
        let found = series.get(key)
        if (found === undefined) {
          found = Metric.withAttributes(metric, attributes)
          series.set(key, found)
        }
        return found
      }
      const set = <S>(metric: Metric.Metric<number, S>, attributes: Record<string, string>, value: number) =>
        seriesOf(metric, attributes).updateUnsafe(value, context)

      const refreshGauges = Effect.map(gauges.read, ({ byStatus, heldFollowups }) => {
        const count = (status: Parameters<typeof byStatus.get>[0]) => byStatus.get(status) ?? 0
        set(runsActive, {}, count("preparing") + count("running"))
        set(runsQueued, {}, count("queued"))
        set(runsParked, { reason: "approval" }, count("waiting_for_approval"))
        set(runsParked, { reason: "input" }, count("waiting_for_input"))
        set(followupsHeld, {}, heldFollowups)
      })

      // OTLP exports what the registry holds: keep the gauges about as fresh as the exports.
      yield* Option.match(config.telemetry.otlp, {
        onNone: () => Effect.void,
        onSome: (otlp) =>
          Effect.forkScoped(Effect.repeat(
            refreshGauges.pipe(Effect.catchCause((cause) => Effect.logWarning("run gauges not read", cause))),
            Schedule.spaced(Duration.millis(otlp.metricsExportMs))
          ))
      })

      return {
        enabled,
        recordRequest: (method, route, status, seconds) => {
          if (!enabled) return
          set(requests, { method, route, status: String(status) }, 1)
          set(latency, { method, route }, seconds)
        },
        recordTokens: (route, input, output) => {
          if (!enabled) return
          set(tokens, { route, type: "input" }, input)
          set(tokens, { route, type: "output" }, output)
        },
        refreshGauges,
        exposition: Effect.andThen(refreshGauges, Effect.sync(() => PrometheusMetrics.formatUnsafe(context)))
      }
    })
  ).pipe(Layer.provide(RunGauges.layer))
}

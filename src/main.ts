/** Launches the service: `npm start` (with SVC_PROCESSES > 1, a supervisor of that many: Supervisor.ts). */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect, Exit, Layer, Option, Redacted, References, Runtime } from "effect"
import cluster from "node:cluster"
import * as App from "./App.ts"
import { ServiceConfig, type ServiceConfigShape } from "./config/ServiceConfig.ts"
import * as ShutdownDeadline from "./ShutdownDeadline.ts"
import * as StartBanner from "./StartBanner.ts"
import * as StartupFailure from "./StartupFailure.ts"
import * as Supervisor from "./Supervisor.ts"
import * as Logging from "./telemetry/Logging.ts"

const fatal = (e: { readonly message: string }) =>
  Effect.andThen(Console.error(`agent-service: ${e.message}`), Effect.sync(() => process.exit(1)))

/**
 * SIGTERM / SIGINT interrupt the service, which then stops gracefully (the
 * listener drains, runs are left to be resumed): that is a clean exit, 0. A
 * stop still running SVC_SHUTDOWN_GRACE_MS + 5 s after the signal is cut
 * short with exit 1 (ShutdownDeadline.ts).
 */
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

/** Logs of what runs outside the service's layers (the supervisor, the shutdown deadline) in the configured format. */
const withLogFormat = (config: ServiceConfigShape) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  config.telemetry.logFormat === "json"
    ? Effect.provide(effect, Logging.layerJson({ nodeId: undefined, secrets: Logging.configuredSecrets(config) }))
    : effect

/** The ports this process listens on, with the settings that choose them. */
const ports = (config: ServiceConfigShape) =>
  [["PORT", config.port], ["SVC_PREVIEW_PORT", config.previews.port]] as const

/** A start-up failure a person can fix as one line (src/StartupFailure.ts); any other as it is. */
const explained = (config: ServiceConfigShape) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchCause(effect, (cause) => {
    const line = StartupFailure.explain(cause, {
      databaseUrl: Option.getOrUndefined(Option.map(config.databaseUrl, Redacted.value)),
      ports: ports(config)
    })
    return line === undefined ? Effect.failCause(cause) : fatal({ message: line })
  })

Effect.gen(function*() {
  const config = yield* ServiceConfig
  // Before anything is created (the data directory, the database, a development key): a taken port stops the start.
  if (!cluster.isWorker) {
    yield* Effect.forEach(ports(config), ([setting, port]) => StartupFailure.checkPort(setting, config.host, port))
  }
  if (Supervisor.isSupervisor(config)) return yield* withLogFormat(config)(Supervisor.supervise(config))
  return yield* Supervisor.annotateWorker(
    Effect.andThen(
      withLogFormat(config)(ShutdownDeadline.arm(config.shutdownGraceMs)),
      Layer.launch(StartBanner.layer.pipe(Layer.provideMerge(App.layer)))
    )
  ).pipe(explained(config))
}).pipe(
  // Without a span exporter spans would only be built and dropped (measured: a seventh of a turn's CPU);
  // with OTEL_EXPORTER_OTLP_ENDPOINT the telemetry layer turns tracing back on (src/telemetry/Otlp.ts).
  Effect.provideService(References.TracerEnabled, false),
  Effect.provideService(References.TracerTimingEnabled, false),
  Effect.provide(ServiceConfig.layer),
  // A configuration mistake is reported as one clear line, not a stack trace.
  Effect.catchTags({
    MasterKeyError: fatal,
    RouteConfigError: fatal,
    ConfigurationError: fatal,
    SupervisorError: fatal,
    PortInUse: fatal,
    ConfigError: (e) => fatal({ message: StartupFailure.settingLine(e) })
  }),
  NodeRuntime.runMain({ teardown })
)

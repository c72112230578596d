/** Launches the service: `npm start` (with SVC_PROCESSES > 1, a supervisor of that many: Supervisor.ts). */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect, Exit, Layer, References, Runtime } from "effect"
import * as App from "./App.ts"
import { ServiceConfig } from "./config/ServiceConfig.ts"
import * as Supervisor from "./Supervisor.ts"
import * as Logging from "./telemetry/Logging.ts"

const fatal = (e: { readonly message: string }) =>
  Effect.andThen(Console.error(`agent-service: ${e.message}`), Effect.sync(() => process.exit(1)))

/**
 * SIGTERM / SIGINT interrupt the service, which then stops gracefully (the
 * listener drains, runs are left to be resumed): that is a clean exit, 0.
 */
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

Effect.gen(function*() {
  const config = yield* ServiceConfig
  if (Supervisor.isSupervisor(config)) {
    const supervise = Supervisor.supervise(config)
    return yield* config.telemetry.logFormat === "json"
      ? Effect.provide(supervise, Logging.layerJson({ nodeId: undefined, secrets: Logging.configuredSecrets(config) }))
      : supervise
  }
  return yield* Supervisor.annotateWorker(Layer.launch(App.layer))
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
    SupervisorError: fatal
  }),
  NodeRuntime.runMain({ teardown })
)

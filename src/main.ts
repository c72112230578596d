/** Launches the service: `npm start` (with SVC_PROCESSES > 1, a supervisor of that many: Supervisor.ts). */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect, Exit, Layer, References, Runtime } from "effect"
import * as App from "./App.ts"
import { ServiceConfig } from "./config/ServiceConfig.ts"
import * as Supervisor from "./Supervisor.ts"

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
  if (Supervisor.isSupervisor(config)) return yield* Supervisor.supervise(config)
  return yield* Supervisor.annotateWorker(Layer.launch(App.layer))
}).pipe(
  // No span exporter is configured: spans would only be built and dropped (measured: a seventh of a turn's CPU).
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

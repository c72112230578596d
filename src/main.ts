/** Launches the service: `npm start`. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer } from "effect"
import * as App from "./App.ts"
import { ServiceConfig } from "./config/ServiceConfig.ts"

Layer.launch(App.layer.pipe(Layer.provide(ServiceConfig.layer))).pipe(
  // A configuration mistake is reported as one clear line, not a stack trace.
  Effect.catchTags({
    MasterKeyError: (e) => Effect.andThen(Console.error(`agent-service: ${e.message}`), Effect.sync(() => process.exit(1))),
    RouteConfigError: (e) => Effect.andThen(Console.error(`agent-service: ${e.message}`), Effect.sync(() => process.exit(1))),
    ConfigurationError: (e) => Effect.andThen(Console.error(`agent-service: ${e.message}`), Effect.sync(() => process.exit(1)))
  }),
  NodeRuntime.runMain
)

/** Launches the service: `npm start`. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Layer } from "effect"
import * as App from "../http/App.ts"
import { ServiceConfig } from "./config/ServiceConfig.ts"

Layer.launch(App.layer.pipe(Layer.provide(ServiceConfig.layer))).pipe(NodeRuntime.runMain)

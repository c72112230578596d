/**
 * What `npm start` prints once the service listens: where the API, the
 * console and the reference page are, where the development key is kept,
 * and which model each band answers with (the scripted echo model, by
 * default, says so). With SVC_LOG_FORMAT=json it is one log line whose
 * annotations carry the same.
 */
import { Console, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { BandNames } from "../domain/Band.ts"
import { displayPath, existingDevelopmentKey } from "./access/Bootstrap.ts"
import { ServiceConfig } from "./config/ServiceConfig.ts"

export const layer: Layer.Layer<never, never, ServiceConfig | HttpServer.HttpServer> = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    const server = yield* HttpServer.HttpServer
    // The configured public URL, unless the port was chosen at bind time (PORT=0).
    const base = config.port === 0 ? HttpServer.formatAddress(server.address) : config.publicUrl
    const keyFile = existingDevelopmentKey(config)
    const bands = BandNames.map((band) => `${band} ${config.bands[band].route ?? "none"}`).join(", ")
    const scripted = BandNames.some((band) => config.bands[band].route === "scripted")
    if (config.telemetry.logFormat === "json") {
      return yield* Effect.logInfo("Ready").pipe(
        Effect.annotateLogs({
          api: `${base}/v1`,
          console: `${base}/console`,
          docs: `${base}/docs`,
          ...(keyFile === undefined ? {} : { development_key_file: keyFile }),
          bands
        })
      )
    }
    yield* Console.log(
      [
        "",
        "  Agent service ready",
        `    API        ${base}/v1  (OpenAPI document: ${base}/v1/openapi.json)`,
        `    Console    ${base}/console`,
        `    Docs       ${base}/docs`,
        ...(keyFile === undefined
          ? []
          : [`    Key        kept in ${displayPath(keyFile)}  (Authorization: Bearer <key>)`]),
        `    Models     ${bands}`,
        ...(scripted
          ? [
            "               scripted is a built-in echo model for trying the API; docs/guide/models.md plugs in a real one"
          ]
          : []),
        ""
      ].join("\n")
    )
  })
)

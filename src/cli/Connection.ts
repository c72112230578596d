/**
 * Which service the CLI talks to, and as whom: `--url` (env `SVC_URL`,
 * default `http://127.0.0.1:8080`) and `--api-key` (env `SVC_API_KEY`),
 * global flags every command accepts; and the typed client made from them.
 */
import { makeServiceClient } from "agent-service/client"
import { Config, Effect, Option } from "effect"
import { Flag, GlobalFlag } from "effect/cli"
import { Usage } from "./CommandFailure.ts"
import { Invocation } from "./Invocation.ts"

const defaultUrl = "http://127.0.0.1:8080"

export const Url = GlobalFlag.Setting("url")({
  flag: Flag.String("url").pipe(
    Flag.withFallbackConfig(Config.String("SVC_URL")),
    Flag.withDefault(defaultUrl),
    Flag.withDescription(`The service's base URL (env SVC_URL; default ${defaultUrl})`)
  )
})

export const ApiKey = GlobalFlag.Setting("api-key")({
  flag: Flag.Redacted("api-key").pipe(
    Flag.withFallbackConfig(Config.Redacted("SVC_API_KEY")),
    Flag.optional,
    Flag.withDescription("The API key (env SVC_API_KEY)")
  )
})

/** The typed client of the service the flags name. */
export const client = Effect.gen(function*() {
  const baseUrl = yield* Url
  const apiKey = yield* ApiKey
  if (Option.isNone(apiKey)) {
    const cliName = (yield* Invocation).name
    return yield* new Usage({
      message: `no API key: pass --api-key or set SVC_API_KEY (the development key the service printed at its ` +
        `first start, a key of SVC_API_KEYS, or one an admin made with \`${cliName} keys create\`)`
    })
  }
  return yield* makeServiceClient({ baseUrl, apiKey: apiKey.value })
})

/**
 * Start-up key provisioning: stores the keys of SVC_API_KEYS; on an embedded
 * install that has no key at all, mints one development key and prints it
 * once (it is stored only as a hash).
 */
import { Console, Effect, Layer, Option, Redacted } from "effect"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { ApiKeys } from "./ApiKeys.ts"

export const DevOrganization = "org_default"
export const DevWorkspace = "default"

export const layer = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    const keys = yield* ApiKeys
    yield* Effect.forEach(config.seedKeys, (k) => keys.seed(k.key, k.organizationId, k.workspaceId), { discard: true })
    if ((yield* keys.count) > 0) return
    if (Option.isSome(config.databaseUrl)) {
      yield* Effect.logWarning(
        "No API keys exist: every request will be refused. Set SVC_API_KEYS or run `npm run cli -- keys create`."
      )
      return
    }
    const minted = yield* keys.mint(DevOrganization, DevWorkspace, "dev")
    yield* Console.log(
      [
        "",
        "  A development API key was created for this embedded install (shown only now):",
        "",
        `    ${Redacted.value(minted.key)}`,
        "",
        `  organization ${minted.organizationId}, workspace ${minted.workspaceId}. Use it as: Authorization: Bearer <key>`,
        ""
      ].join("\n")
    )
  })
)

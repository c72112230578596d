/**
 * Start-up key provisioning: stores the keys of SVC_API_KEYS (with their
 * role) and revokes the seed keys no longer listed there; on an embedded
 * install that has no key at all, mints one development key, an admin of its
 * organization, prints it and keeps it in `<SVC_DATA_DIR>/development-key`
 * (mode 0600, beside the master key), so a later start can say where it is
 * (the database stores only its hash).
 */
import { Console, Effect, Layer, Option, Redacted } from "effect"
import { existsSync, writeFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { ServiceConfig, type ServiceConfigShape } from "../config/ServiceConfig.ts"
import { ApiKeys } from "./ApiKeys.ts"

export const DevOrganization = "org_default"
export const DevWorkspace = "default"

/** Where an embedded install keeps its development key. */
export const developmentKeyFile = (dataDir: string): string => join(resolve(dataDir), "development-key")

/** The development key's file as a person would type it (relative to the working directory when under it). */
export const displayPath = (file: string): string => {
  const rel = relative(process.cwd(), file)
  return rel.startsWith("..") || rel === "" ? file : `./${rel}`
}

/** The development key's file when this is an embedded install that has one; undefined otherwise. */
export const existingDevelopmentKey = (config: ServiceConfigShape): string | undefined => {
  if (Option.isSome(config.databaseUrl)) return undefined
  const file = developmentKeyFile(config.dataDir)
  return existsSync(file) ? file : undefined
}

export const layer = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    const keys = yield* ApiKeys
    yield* Effect.forEach(config.seedKeys, (k, i) =>
      Effect.gen(function*() {
        const valid = yield* keys.seed(k.key, k.organizationId, k.workspaceId, k.role ?? "member")
        if (!valid) {
          yield* Effect.logWarning(
            `SVC_API_KEYS entry ${
              i + 1
            } is a key revoked through the API: it stays revoked. Remove it from SVC_API_KEYS.`
          )
        }
      }), { discard: true })
    const removed = yield* keys.revokeRemovedSeeds(config.seedKeys.map((k) => k.key))
    if (removed > 0) yield* Effect.logInfo(`Revoked ${removed} API key(s) no longer in SVC_API_KEYS.`)
    if ((yield* keys.count) > 0) return
    if (Option.isSome(config.databaseUrl)) {
      yield* Effect.logWarning(
        "No API keys exist: every request will be refused. Set SVC_API_KEYS (an `<key>:<org_...>:<workspace>:admin` entry " +
          "gives an admin key, which creates the others through POST /v1/api-keys)."
      )
      return
    }
    const minted = yield* keys.mint(DevOrganization, DevWorkspace, {
      source: "dev",
      name: "development key",
      role: "admin"
    })
    const file = developmentKeyFile(config.dataDir)
    yield* Effect.sync(() => writeFileSync(file, Redacted.value(minted.key) + "\n", { mode: 0o600 }))
    yield* Console.log(
      [
        "",
        "  A development API key was created for this embedded install:",
        "",
        `    ${Redacted.value(minted.key)}`,
        "",
        `  organization ${minted.record.organizationId}, workspace ${minted.record.workspaceId}, role admin. ` +
        "Use it as: Authorization: Bearer <key>",
        `  It is kept in ${displayPath(file)} (readable by you only): \`export KEY=$(cat ${displayPath(file)})\``,
        ""
      ].join("\n")
    )
  })
)

/**
 * Where the master keys come from: SVC_MASTER_KEY (and SVC_MASTER_KEY_PREVIOUS);
 * on embedded storage without one, a key file generated once in the data
 * directory (mode 0600). With DATABASE_URL and no key the service refuses to start.
 */
import { Data, Effect, Layer, Option, Redacted } from "effect"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { generateMasterKey, type MasterKey, parseMasterKey, SecretBox } from "./SecretBox.ts"

export class MasterKeyError extends Data.TaggedError("MasterKeyError")<{ readonly message: string }> {}

const parseOrFail = (text: string, source: string) => {
  const parsed = parseMasterKey(text)
  return typeof parsed === "string"
    ? Effect.fail(new MasterKeyError({ message: `${source}: ${parsed}` }))
    : Effect.succeed(parsed)
}

const keyFile = (dataDir: string) =>
  Effect.sync(() => {
    const dir = resolve(dataDir)
    const file = join(dir, "master.key")
    if (!existsSync(file)) {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      writeFileSync(file, generateMasterKey() + "\n", { mode: 0o600, flag: "wx" })
    }
    return { file, text: readFileSync(file, "utf8") }
  })

export const layer: Layer.Layer<SecretBox, MasterKeyError, ServiceConfig> = Layer.effect(SecretBox)(
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    const current: MasterKey = yield* Option.match(config.masterKey, {
      onSome: (key) => parseOrFail(Redacted.value(key), "SVC_MASTER_KEY"),
      onNone: () =>
        Option.isSome(config.databaseUrl)
          ? Effect.fail(
            new MasterKeyError({
              message:
                "SVC_MASTER_KEY is required with DATABASE_URL: set it to 32 random bytes in base64 (for example `openssl rand -base64 32`)."
            })
          )
          : Effect.flatMap(keyFile(config.dataDir), ({ file, text }) => parseOrFail(text, file))
    })
    const previous = yield* Effect.forEach(
      config.previousMasterKeys,
      (k) => parseOrFail(Redacted.value(k), "SVC_MASTER_KEY_PREVIOUS")
    )
    return SecretBox.make(current, previous)
  })
)

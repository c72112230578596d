/**
 * The master key as a process concern (README: SVC_MASTER_KEY,
 * SVC_MASTER_KEY_PREVIOUS; spec 5.6): the embedded default generates
 * `master.key` (mode 0600) once and keeps using it across restarts; with
 * DATABASE_URL the key is required; an invalid key stops the process with a
 * message before it listens.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { Secret } from "../../../domain/Secret.ts"
import { SecretContext } from "../../../domain/SecretContext.ts"
import { parseMasterKey } from "../../../src/secrets/SecretBox.ts"
import * as McpServers from "../../support/McpServers.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { freePort } from "../../support/TestServer.ts"

const decodeSecret = Schema.decodeUnknownSync(Schema.fromJsonString(Secret))
const decodeContext = Schema.decodeUnknownSync(Schema.fromJsonString(SecretContext))
const decodeId = Schema.decodeUnknownSync(Schema.fromJsonString(Schema.Struct({ id: Schema.String })))
const decodeError = Schema.decodeUnknownSync(
  Schema.fromJsonString(Schema.Struct({ error: Schema.Struct({ type: Schema.String, code: Schema.String }) }))
)

const tempDataDir = ServiceProcess.tempDataDir("svc-master-key-")

/** The key variables must come from the test alone: ServiceProcess merges process.env. */
const assertUnsetInParent = (...names: ReadonlyArray<string>) => {
  for (const name of names) assert.isUndefined(process.env[name], `${name} is set in the test environment`)
}

/** The tool server test route against the recorder: 502, and the bearer it was sent. */
const testToolServer = (url: string, key: string, id: string) =>
  Effect.map(ServiceProcess.request(url, "POST", `/v1/tool-servers/${id}/test`, key), (reply) => {
    assert.strictEqual(reply.status, 502, reply.text)
    assert.deepInclude(decodeError(reply.text).error, { type: "api_error", code: "service_unavailable" })
    return reply
  })

const exitedBeforeListening = /^service exited with [1-9][0-9]* before listening/

describe("master key", () => {
  it.live(
    "embedded default: master.key is generated once with mode 0600, and secrets stay usable across restarts",
    () =>
      Effect.gen(function*() {
        assertUnsetInParent("SVC_MASTER_KEY", "SVC_MASTER_KEY_PREVIOUS", "DATABASE_URL")
        const dataDir = yield* tempDataDir
        const hook = yield* McpServers.authRecorder
        const apiKey = "sk_master_key_embedded"
        const env = {
          SVC_DATA_DIR: dataDir,
          SVC_QUIET: "1",
          SVC_API_KEYS: `${apiKey}:org_mk:prod`,
          SVC_ALLOW_PRIVATE_URLS: "1"
        }
        const keyFile = join(dataDir, "master.key")
        assert.isFalse(existsSync(keyFile))

        const first = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
        assert.isTrue(existsSync(keyFile))
        assert.strictEqual(statSync(keyFile).mode & 0o777, 0o600)
        const keyText = readFileSync(keyFile, "utf8")
        const parsed = parseMasterKey(keyText)
        assert.notStrictEqual(typeof parsed, "string", `master.key does not hold a valid key: ${keyText}`)
        // The key is never printed.
        assert.notInclude(first.output(), keyText.trim())

        const value = "embedded-secret-value-3f9a"
        const created = yield* ServiceProcess.request(first.url, "POST", "/v1/secrets", apiKey, {
          name: "survivor",
          value
        })
        assert.strictEqual(created.status, 200, created.text)
        assert.notInclude(created.text, value)
        const secret = decodeSecret(created.text)
        const ts = yield* ServiceProcess.request(first.url, "POST", "/v1/tool-servers", apiKey, {
          name: "recorder",
          transport: "http",
          url: `${hook.url}/mcp`,
          auth: { type: "bearer", secretId: secret.id }
        })
        assert.strictEqual(ts.status, 200, ts.text)
        const toolServerId = decodeId(ts.text).id
        assert.notInclude((yield* testToolServer(first.url, apiKey, toolServerId)).text, value)
        assert.deepStrictEqual(hook.authorizations(), [`Bearer ${value}`])
        yield* ServiceProcess.stop(first)

        // Restart (and a kill -9 restart): the same key file, untouched, and the secret still opens.
        for (const signal of ["SIGKILL", "SIGTERM"] as const) {
          const next = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
          assert.strictEqual(readFileSync(keyFile, "utf8"), keyText)
          assert.strictEqual(statSync(keyFile).mode & 0o777, 0o600)
          const read = yield* ServiceProcess.request(next.url, "GET", `/v1/secrets/${secret.id}`, apiKey)
          assert.strictEqual(read.status, 200, read.text)
          assert.deepStrictEqual(decodeSecret(read.text), secret)
          const ctx = yield* ServiceProcess.request(next.url, "POST", "/v1/secret-contexts", apiKey, {
            name: `after-restart-${signal}`,
            projections: [{ type: "workspace_env", secretId: secret.id, env: "SURVIVOR" }]
          })
          assert.strictEqual(ctx.status, 200, ctx.text)
          assert.deepStrictEqual(decodeContext(ctx.text).projections, [
            { type: "workspace_env", secretId: secret.id, env: "SURVIVOR" }
          ])
          hook.clear()
          yield* testToolServer(next.url, apiKey, toolServerId)
          assert.deepStrictEqual(hook.authorizations(), [`Bearer ${value}`])
          yield* ServiceProcess.stop(next, signal)
        }
        assert.strictEqual(readFileSync(keyFile, "utf8"), keyText)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "embedded with SVC_MASTER_KEY: the given key is used and no key file is written",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDataDir
        const apiKey = "sk_master_key_given"
        const first = yield* ServiceProcess.start({
          SVC_DATA_DIR: dataDir,
          SVC_QUIET: "1",
          SVC_API_KEYS: `${apiKey}:org_mk:prod`,
          SVC_MASTER_KEY: "07".repeat(32),
          PORT: String(yield* freePort)
        })
        const created = yield* ServiceProcess.request(first.url, "POST", "/v1/secrets", apiKey, {
          name: "given",
          value: "v"
        })
        assert.strictEqual(created.status, 200, created.text)
        assert.isFalse(existsSync(join(dataDir, "master.key")))
        yield* ServiceProcess.stop(first)
      }).pipe(Effect.scoped),
    90_000
  )

  it.live(
    "DATABASE_URL without SVC_MASTER_KEY: the process exits non-zero before listening, naming SVC_MASTER_KEY",
    () =>
      Effect.gen(function*() {
        assertUnsetInParent("SVC_MASTER_KEY", "SVC_MASTER_KEY_PREVIOUS")
        const db = yield* testDatabase
        const dataDir = yield* tempDataDir
        const failure = yield* ServiceProcess.start({
          DATABASE_URL: db.url,
          SVC_DATA_DIR: dataDir,
          SVC_API_KEYS: "sk_master_key_pg:org_mk:prod",
          SVC_QUIET: "1",
          SVC_RUNNER_PORT: String(yield* freePort),
          PORT: String(yield* freePort)
        }).pipe(Effect.flip)
        assert.match(failure.message, exitedBeforeListening)
        assert.include(failure.message, "SVC_MASTER_KEY")
        assert.notInclude(failure.message, "Listening on")
        // Nothing was generated in its place.
        assert.isFalse(existsSync(join(dataDir, "master.key")))
      }).pipe(Effect.scoped),
    90_000
  )

  it.live(
    "an invalid SVC_MASTER_KEY or SVC_MASTER_KEY_PREVIOUS stops the process with a message",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDataDir
        const env = { SVC_DATA_DIR: dataDir, SVC_QUIET: "1", SVC_API_KEYS: "sk_master_key_bad:org_mk:prod" }

        const short = yield* ServiceProcess.start({ ...env, SVC_MASTER_KEY: "short", PORT: String(yield* freePort) })
          .pipe(
            Effect.flip
          )
        assert.match(short.message, exitedBeforeListening)
        assert.include(short.message, "SVC_MASTER_KEY")
        assert.include(short.message, "32 bytes")
        assert.isFalse(existsSync(join(dataDir, "master.key")))

        // 31 bytes of hex-looking text is not a key either.
        const hex = yield* ServiceProcess.start({
          ...env,
          SVC_MASTER_KEY: "ab".repeat(31),
          PORT: String(yield* freePort)
        }).pipe(
          Effect.flip
        )
        assert.match(hex.message, exitedBeforeListening)
        assert.include(hex.message, "SVC_MASTER_KEY")

        const previous = yield* ServiceProcess.start({
          ...env,
          SVC_MASTER_KEY: Buffer.alloc(32, 1).toString("base64"),
          SVC_MASTER_KEY_PREVIOUS: "not-a-key",
          PORT: String(yield* freePort)
        }).pipe(Effect.flip)
        assert.match(previous.message, exitedBeforeListening)
        assert.include(previous.message, "SVC_MASTER_KEY_PREVIOUS")

        // With DATABASE_URL too.
        const db = yield* testDatabase
        const pg = yield* ServiceProcess.start({
          ...env,
          DATABASE_URL: db.url,
          SVC_MASTER_KEY: "short",
          SVC_RUNNER_PORT: String(yield* freePort),
          PORT: String(yield* freePort)
        }).pipe(Effect.flip)
        assert.match(pg.message, exitedBeforeListening)
        assert.include(pg.message, "SVC_MASTER_KEY")
        assert.include(pg.message, "32 bytes")
      }).pipe(Effect.scoped),
    120_000
  )
})

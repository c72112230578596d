/**
 * `npm start` as a process: embedded PGlite by default (a development key is
 * printed once), PostgreSQL with DATABASE_URL; data survives a restart in
 * both modes, including kill -9. (Keys across restarts: ApiKeySeeds.test.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Agent } from "../../../domain/Agent.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { freePort } from "../../support/TestServer.ts"

const devKeyPattern = /\n\s+(sk_[0-9A-Za-z]+)\n/
const decodeAgent = Schema.decodeUnknownSync(Schema.fromJsonString(Agent))

const tempDataDir = ServiceProcess.tempDataDir("svc-embedded-")

describe("service process", () => {
  it.live(
    "embedded: prints a development key once, keeps data across restart and kill -9",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDataDir
        const env = { SVC_DATA_DIR: dataDir, PORT: String(yield* freePort), SVC_QUIET: "1", SVC_API_KEYS: "" }

        const first = yield* ServiceProcess.start(env)
        const key = devKeyPattern.exec(first.output())?.[1]
        assert.isDefined(key)
        if (key === undefined) return
        const health = yield* Effect.promise(() => fetch(first.url + "/healthz"))
        assert.strictEqual(health.status, 200)
        const created = yield* ServiceProcess.request(first.url, "POST", "/v1/agents", key, { context: "persist me" })
        assert.strictEqual(created.status, 200)
        const agent = decodeAgent(created.text)
        yield* ServiceProcess.stop(first)

        const second = yield* ServiceProcess.start(env)
        assert.notMatch(second.output(), /development API key/)
        const read = yield* ServiceProcess.request(second.url, "GET", `/v1/agents/${agent.id}`, key)
        assert.strictEqual(read.status, 200)
        assert.deepStrictEqual(decodeAgent(read.text), agent)
        const patched = yield* ServiceProcess.request(second.url, "PATCH", `/v1/agents/${agent.id}`, key, {
          band: "lite"
        })
        assert.strictEqual(patched.status, 200)
        yield* ServiceProcess.stop(second, "SIGKILL")

        const third = yield* ServiceProcess.start(env)
        const after = yield* ServiceProcess.request(third.url, "GET", `/v1/agents/${agent.id}`, key)
        assert.strictEqual(decodeAgent(after.text).band, "lite")
        assert.strictEqual(decodeAgent(after.text).configVersion, 2)
        yield* ServiceProcess.stop(third)
      }).pipe(Effect.scoped),
    90_000
  )

  it.live("embedded: a second process on the same data directory is refused", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      const env = { SVC_DATA_DIR: dataDir, SVC_QUIET: "1", SVC_API_KEYS: "" }
      const first = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
      const second = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) }).pipe(Effect.flip)
      assert.match(second.message, /in use by process/)
      yield* ServiceProcess.stop(first)
    }).pipe(Effect.scoped), 60_000)

  it.live("postgres: DATABASE_URL and SVC_API_KEYS; data survives kill -9", () =>
    Effect.gen(function*() {
      const db = yield* testDatabase
      const env = {
        DATABASE_URL: db.url,
        SVC_API_KEYS: "sk_proc_a:org_proc:prod",
        SVC_MASTER_KEY: Buffer.alloc(32, 9).toString("base64"),
        SVC_QUIET: "1",
        SVC_RUNNER_PORT: String(yield* freePort)
      }
      const first = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
      assert.notMatch(first.output(), /development API key/)
      const created = yield* ServiceProcess.request(first.url, "POST", "/v1/agents", "sk_proc_a", { band: "lite" })
      assert.strictEqual(created.status, 200)
      const agent = decodeAgent(created.text)
      yield* ServiceProcess.stop(first, "SIGKILL")

      const second = yield* ServiceProcess.start({ ...env, PORT: String(yield* freePort) })
      const read = yield* ServiceProcess.request(second.url, "GET", `/v1/agents/${agent.id}`, "sk_proc_a")
      assert.deepStrictEqual(decodeAgent(read.text), agent)
      yield* ServiceProcess.stop(second)
    }).pipe(Effect.scoped), 90_000)
})

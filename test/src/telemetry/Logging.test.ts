/**
 * JSON log lines (SVC_LOG_FORMAT=json): one object a line with the ids lifted
 * to the top, and no secret value in it, whether it arrives as a `Redacted`
 * annotation or inside a failure's text (a provider echoing the key it was
 * sent, the database password in a connection error).
 */
import { assert, describe, it } from "@effect/vitest"
import { Data, Effect, Logger, Option, Redacted, Schema } from "effect"
import * as Logging from "../../../src/telemetry/Logging.ts"
import * as TestServer from "../../support/TestServer.ts"

const providerKey = "sk-live-0123456789abcdef"
const dbPassword = "pg pass/word\"quoted"
const config = {
  ...TestServer.baseConfig(`postgres://svc:${encodeURIComponent(dbPassword)}@127.0.0.1:5432/svc`, 0),
  openai: { baseUrl: "http://127.0.0.1:9/v1", apiKey: Option.some(Redacted.make(providerKey)) }
}

class ProviderRefused extends Data.TaggedError("ProviderRefused")<{ readonly message: string }> {}

const Line = Schema.fromJsonString(Schema.Struct({
  timestamp: Schema.String,
  level: Schema.String,
  message: Schema.Unknown,
  node_id: Schema.optional(Schema.String),
  request_id: Schema.optional(Schema.String),
  run_id: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.String),
  annotations: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
}))

/** The lines `effect` logs through the JSON logger of `config`. */
const logged = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const json = Logging.jsonLine({ nodeId: "node_test", secrets: Logging.configuredSecrets(config) })
    yield* effect.pipe(
      Effect.ignore,
      Effect.provide(Logger.layer([Logger.make((event) => lines.push(json.log(event)))]))
    )
    return lines
  })

describe("JSON log lines", () => {
  it.effect("carry the ids at the top level and never a configured secret or a Redacted value", () =>
    Effect.gen(function*() {
      const lines = yield* logged(
        Effect.fail(
          new ProviderRefused({
            message: `Incorrect API key provided: ${providerKey}; database said: password "${dbPassword}"`
          })
        ).pipe(
          Effect.catchCause((cause) => Effect.logError("model call failed", cause)),
          Effect.annotateLogs({
            request_id: "req_1",
            run_id: "run_1",
            worker: "2",
            token: Redacted.make("a-user-secret-value")
          })
        )
      )
      assert.strictEqual(lines.length, 1)
      const line = Schema.decodeUnknownSync(Line)(lines[0])
      assert.strictEqual(line.level, "ERROR")
      assert.strictEqual(line.message, "model call failed")
      assert.strictEqual(line.node_id, "node_test")
      assert.strictEqual(line.request_id, "req_1")
      assert.strictEqual(line.run_id, "run_1")
      assert.deepStrictEqual(line.annotations, { worker: "2", token: "<redacted>" })
      assert.include(line.cause, "Incorrect API key provided: <redacted>; database said: password \"<redacted>\"")
      for (const secret of [providerKey, "a-user-secret-value", "pass/word"]) assert.notInclude(lines[0], secret)
    }))
})

/**
 * Rate limits hold across the processes of a cluster: two service processes
 * on one PostgreSQL draw on the same token bucket of a key (configured from
 * SVC_RATE_KEY), and a malformed limit stops a process before it starts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ErrorBody } from "../../../http/ErrorEnvelope.ts"
import { deploymentEnv, startNode } from "../../support/ProcessNodes.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { freePort } from "../../support/TestServer.ts"

const key = "sk_shared_limits"
const Envelope = Schema.Struct({ error: ErrorBody })

describe("limits across processes", () => {
  it.live(
    "two processes share a key's bucket: requests to either count, and the next one to either is 429",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const common = {
          ...deploymentEnv(db.url, `${key}:org_shared:prod`, 6),
          // Four requests, then one more every 1,000 s: no refill during the test.
          SVC_RATE_KEY: "0.001/4"
        }
        const a = yield* startNode(common)
        const b = yield* startNode(common)
        const get = (url: string) => ServiceProcess.request(url, "GET", "/v1/bands", key)
        const remaining = []
        for (const url of [a.url, b.url, a.url, b.url]) {
          const reply = yield* get(url)
          assert.strictEqual(reply.status, 200)
          remaining.push(reply.headers.get("ratelimit-remaining"))
        }
        assert.deepStrictEqual(remaining, ["3", "2", "1", "0"])
        for (const url of [a.url, b.url]) {
          const refused = yield* get(url)
          assert.strictEqual(refused.status, 429)
          const { error } = ServiceProcess.decodeJson(Envelope, refused.text)
          assert.deepStrictEqual([error.type, error.code], ["rate_limit_error", "rate_limited"])
          assert.strictEqual(refused.headers.get("retry-after"), "1000")
          assert.strictEqual(refused.headers.get("ratelimit-limit"), "4")
        }
        yield* ServiceProcess.stop(a)
        yield* ServiceProcess.stop(b)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live("a malformed limit stops the process with a message naming the variable", () =>
    Effect.gen(function*() {
      const result = yield* ServiceProcess.run("src/main.ts", [], {
        SVC_ORG_SPEND_QUOTA: "org_a=lots",
        PORT: String(yield* freePort),
        SVC_QUIET: "1"
      })
      assert.strictEqual(result.code, 1)
      assert.strictEqual(
        result.stderr,
        "agent-service: SVC_ORG_SPEND_QUOTA: expected <cents>/<day|month> or <organization>=<cents>/<day|month> entries; got 'org_a=lots'\n"
      )
    }), 60_000)
})

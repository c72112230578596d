/**
 * Start-up as a process (`node src/main.ts`): a request that reaches the port
 * while the service is still starting is answered at once, never left
 * waiting. The process is held in its start-up by a database that does not
 * answer yet (a proxy that holds its connections); until then the port is not
 * bound (connections are refused) or answers 503 with Retry-After; once the
 * database answers, the service becomes ready and `/healthz` answers 200.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { request } from "node:http"
import { heldProxy } from "../../support/HeldProxy.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import { consecutiveFreePorts, freePort } from "../../support/TestServer.ts"

/** How long an answer (a refusal included) may take: a waiting connection is what the test rules out. */
const answerWithinMs = 5_000
const deadlineMs = 120_000

type Answer =
  | { readonly _tag: "refused" }
  | {
    readonly _tag: "answered"
    readonly status: number
    readonly retryAfter: string | undefined
    readonly body: string
  }
  | { readonly _tag: "no answer" }

/** GET /healthz on 127.0.0.1:port, classified; a request without an answer within answerWithinMs is "no answer". */
const probe = (port: number) =>
  Effect.callback<Answer>((resume) => {
    const req = request({ host: "127.0.0.1", port, path: "/healthz", agent: false, timeout: answerWithinMs }, (res) => {
      let body = ""
      res.on("data", (d: Buffer) => (body += d.toString()))
      res.on("end", () =>
        resume(
          Effect.succeed({
            _tag: "answered",
            status: res.statusCode ?? 0,
            retryAfter: res.headers["retry-after"],
            body
          })
        ))
    })
    req.on("timeout", () => {
      req.destroy()
      resume(Effect.succeed({ _tag: "no answer" }))
    })
    req.on("error", (error: NodeJS.ErrnoException) =>
      resume(Effect.succeed(error.code === "ECONNREFUSED" ? { _tag: "refused" } : { _tag: "no answer" })))
    req.end()
    return Effect.sync(() =>
      req.destroy()
    )
  })

/** Refused (the port is not bound) or 503 with Retry-After: both tell a client to come back. */
const assertNotReadyAnswer = (answer: Answer) => {
  if (answer._tag === "answered") {
    assert.strictEqual(answer.status, 503)
    assert.strictEqual(answer.retryAfter, "1")
  } else {
    assert.deepStrictEqual(answer, { _tag: "refused" })
  }
}

/** Starts the service on a database held by a proxy; probes during start-up, releases it, probes once ready. */
const probeThroughStartUp = (env: Record<string, string>, listeners: number) =>
  Effect.gen(function*() {
    const db = yield* testDatabase
    const proxy = yield* heldProxy(5432)
    const port = yield* freePort
    const launched = yield* ServiceProcess.launch({
      ...env,
      DATABASE_URL: db.url.replace("127.0.0.1:5432", `127.0.0.1:${proxy.port}`),
      PORT: String(port),
      SVC_API_KEYS: "sk_startup:org_startup:prod",
      SVC_MASTER_KEY: Buffer.alloc(32, 3).toString("base64"),
      SVC_RUNNER_HOST: "127.0.0.1",
      SVC_QUIET: "1"
    })
    // The service is waiting on its database: it cannot be ready.
    yield* proxy.connected
    const during = yield* Effect.all([probe(port), probe(port)], { concurrency: "unbounded" })
    during.forEach(assertNotReadyAnswer)
    assert.notMatch(launched.output(), /Listening on http:/)

    yield* proxy.release
    const service = yield* ServiceProcess.listening(launched)
    yield* ServiceProcess.waitForOutput(service, (out) =>
      (out.match(/Listening on http:/g) ?? []).length === listeners, deadlineMs)
    const ready = yield* probe(port)
    assert.deepStrictEqual(ready, { _tag: "answered", status: 200, retryAfter: undefined, body: "{\"status\":\"ok\"}" })
    yield* ServiceProcess.stop(service)
  })

describe("start-up", () => {
  it.live(
    "a probe while the service waits on its database is refused or answered 503, not left waiting; 200 once ready",
    () =>
      Effect.gen(function*() {
        yield* probeThroughStartUp({ SVC_RUNNER_PORT: String(yield* freePort) }, 1)
      }).pipe(Effect.scoped),
    180_000
  )

  it.live("SVC_PROCESSES=2: the same while both workers start, 200 once they listen", () =>
    Effect.gen(function*() {
      yield* probeThroughStartUp({ SVC_PROCESSES: "2", SVC_RUNNER_PORT: String(yield* consecutiveFreePorts(2)) }, 2)
    }).pipe(Effect.scoped), 180_000)
})

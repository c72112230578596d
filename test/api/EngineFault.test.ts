/**
 * engine_fault, by injecting a real fault: the database refuses the loop's
 * follow-up claim at the turn boundary (a PostgreSQL trigger raising an
 * error), so the loop dies mid-run. The run fails with engine_fault and an
 * incident reference that is logged with the cause; the stream ends with an
 * error chunk that carries no internal detail; the thread is freed. Log lines
 * are captured, not printed.
 */
import { PgClient } from "@effect/sql-pg"
import { assert } from "@effect/vitest"
import { Effect, Layer, Logger, References } from "effect"
import { Thread } from "../../domain/Thread.ts"
import { agentWithThread, getRun, send } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"

interface Logged {
  readonly message: string
  readonly annotations: Readonly<Record<string, unknown>>
}

const logged: Array<Logged> = []

const capture = Logger.layer([
  Logger.make((options) => {
    logged.push({
      message: String(options.message),
      annotations: options.fiber.getRef(References.CurrentLogAnnotations)
    })
  })
])

/** The service (its log lines captured) plus a SQL client on its database, to inject the fault. */
const Harness = TestServer.layerWithSql().pipe(Layer.provide(capture))

/** Every follow-up claim fails while the fault is in place. */
const injectFault = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  yield* sql.unsafe(`CREATE FUNCTION svc_test_fault() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'injected fault: secret internals of table run_followups'; END $$`)
  yield* sql.unsafe(
    `CREATE TRIGGER svc_test_fault BEFORE UPDATE ON run_followups FOR EACH STATEMENT EXECUTE FUNCTION svc_test_fault()`
  )
}).pipe(Effect.orDie)

const removeFault = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  yield* sql.unsafe(`DROP TRIGGER svc_test_fault ON run_followups`)
  yield* sql.unsafe(`DROP FUNCTION svc_test_fault()`)
}).pipe(Effect.orDie)

TestServer.suiteWith(Harness)("engine fault", (it) => {
  it.effect("a fault in the loop fails the run with engine_fault and a logged inc_ reference; the stream hides the cause; the thread is freed", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      yield* Effect.acquireRelease(injectFault, () => removeFault)
      const { runId, parsed } = yield* send(thread.id, "hello")

      const run = yield* getRun(runId)
      assert.strictEqual(run.status, "failed")
      assert.strictEqual(run.terminalReason, "engine_fault")
      const reference = run.error?.reference ?? ""
      assert.match(reference, /^inc_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(run.error, {
        type: "api_error",
        code: "internal_error",
        message: "The run failed because of an internal error.",
        reference
      })
      assert.notInclude(run.error?.message ?? "", "inc_")

      // The stream: the answer so far, then an error chunk with nothing internal in it, and the terminal chunks.
      assert.deepStrictEqual(parsed.chunks.slice(-4), [
        { type: "error", errorText: "The run failed because of an internal error." },
        { type: "data-svc-terminal", data: { terminalReason: "engine_fault" } },
        { type: "data-svc-usage", data: run.usage },
        { type: "finish", finishReason: "error" }
      ])
      const text = JSON.stringify(parsed.chunks)
      for (const internal of ["secret", "run_followups", "injected", "inc_", "    at "]) {
        assert.notInclude(text, internal)
      }

      // The incident is logged with its reference, the run and the cause.
      const incident = logged.find((l) => l.annotations["reference"] === reference)
      assert.isDefined(incident)
      // The message is the text and the defect itself (the database's failure).
      assert.match(incident?.message ?? "", /^run engine fault,.*SqlError/)
      assert.strictEqual(incident?.annotations["run_id"], runId)

      const after = yield* TestServer.request("GET", `/v1/threads/${thread.id}`)
      assert.strictEqual((yield* TestServer.expectOk(after, 200, Thread)).status, "idle")
    }).pipe(Effect.scoped))

  it.effect("with the fault gone the same thread runs again", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const { runId } = yield* send(thread.id, "hello again")
      assert.strictEqual((yield* getRun(runId)).status, "completed")
    }))
})

/**
 * The shutdown's hard deadline as a process (`node src/main.ts`, PostgreSQL):
 * a stop that something holds still ends. Here what holds it is real: the
 * database stops answering (a proxy that passes nothing more, resets nothing)
 * while the service runs, so the runner's and the node's last statements
 * never return. Without the deadline the process outlives every bound; with
 * it, it exits 1 at SVC_SHUTDOWN_GRACE_MS + 5 s after SIGTERM, having logged
 * the stage it was stuck in and the handles still open. (A clean stop, 0:
 * Shutdown.test.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { MarginMs } from "../../../src/ShutdownDeadline.ts"
import { heldProxy } from "../../support/HeldProxy.ts"
import { deploymentEnv, startNode } from "../../support/ProcessNodes.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"

const key = "sk_deadline"
const graceMs = 1_000
/** The deadline is graceMs + MarginMs; the bound leaves a loaded 2-core machine room on top of it. */
const exitBoundMs = 45_000

describe("shutdown deadline", () => {
  it.live(
    "a stop held by a database that stopped answering ends at the deadline: exit 1, the pending stage logged",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const proxy = yield* heldProxy(5432)
        yield* proxy.release
        const service = yield* startNode({
          ...deploymentEnv(db.url.replace("127.0.0.1:5432", `127.0.0.1:${proxy.port}`), `${key}:org_deadline:prod`, 9),
          SVC_SHUTDOWN_GRACE_MS: String(graceMs)
        })
        assert.strictEqual((yield* ServiceProcess.request(service.url, "GET", "/v1/agents", key)).status, 200)

        yield* proxy.freeze
        yield* ServiceProcess.stop(service, "SIGTERM").pipe(
          Effect.timeoutOrElse({
            duration: exitBoundMs,
            orElse: () => Effect.die(new Error(`still running ${exitBoundMs} ms after SIGTERM:\n${service.output()}`))
          })
        )
        assert.strictEqual(service.child.exitCode, 1, service.output())
        const deadlineMs = graceMs + MarginMs
        const line = new RegExp(
          `shutdown did not finish within ${deadlineMs} ms of SIGTERM; exiting 1\\. ` +
            "Still pending: stopping: [^;]+; open handles: \\S"
        )
        assert.match(service.output(), line)
      }).pipe(Effect.scoped),
    120_000
  )
})

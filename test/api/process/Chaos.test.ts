/**
 * The chaos run's short variant (`npm run chaos` is the long one, same
 * modules): three runners and a client node on one PostgreSQL, a few dozen
 * runs of every scenario (text, MCP tool steps, approvals resolved and left
 * to expire, cancels, follow-ups) while runners are killed with SIGKILL and
 * restarted. Every run ends exactly once as its scenario says, its client's
 * stream (across reconnects through surviving nodes) is the stored one with
 * ids 1..n and passes the `ai` package, no tool call runs twice without a
 * kill cutting its step short, and every run that was executing on a killed
 * runner went on elsewhere.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { assess } from "../../../bench/chaos/Assertions.ts"
import { runChaos } from "../../../bench/chaos/ChaosRun.ts"
import { failover, report } from "../../../bench/chaos/Report.ts"

describe("chaos", () => {
  it.live(
    "runs survive runners killed at random: each ends once, streams whole and in order",
    () =>
      Effect.gen(function*() {
        const result = yield* runChaos({
          runners: 3,
          runs: 36,
          concurrency: 6,
          durationMs: 35_000,
          killEveryMs: 4_000,
          restartAfterMs: 2_500,
          maxKills: 4,
          settleMs: 40_000,
          maxParkMs: 5_000,
          env: {}
        })
        const verdict = yield* assess(result)
        const text = report(result, verdict)
        assert.deepStrictEqual(verdict.violations, [], text)
        assert.isAtLeast(result.sessions.length, 24, text)
        assert.isAtLeast(result.chaos.kills().length, 2, text)
        assert.deepStrictEqual(failover(result).missing, [], text)
      }).pipe(Effect.scoped),
    300_000
  ) // about 40 s alone; bounded by its own deadlines (load 35 s, settle 40 s), start-up and teardown beside the rest of the suite take the rest
})

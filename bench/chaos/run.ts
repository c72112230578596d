/**
 * `npm run chaos`: the chaos run (see ChaosRun.ts) on 127.0.0.1 only, bounded
 * in time and count; prints the figures and every violated invariant, exits 1
 * on any. Knobs (environment): CHAOS_RUNS (default 400), CHAOS_DURATION_MS
 * (180000), CHAOS_CONCURRENCY (12), CHAOS_RUNNERS (3), CHAOS_KILL_EVERY_MS
 * (8000: a kill every 4 to 12 s), CHAOS_RESTART_AFTER_MS (4000), CHAOS_MAX_KILLS (60),
 * CHAOS_SETTLE_MS (60000), CHAOS_MAX_PARK_MS (6000); CHAOS_LOG_DIR: a folder to write
 * each process's output to.
 */
import { Effect } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import { join } from "node:path"
import { assess } from "./Assertions.ts"
import { runChaos } from "./ChaosRun.ts"
import { report } from "./Report.ts"

const envInt = (name: string, fallback: number): number => {
  const n = Number.parseInt(process.env[name] ?? "", 10)
  return Number.isFinite(n) && n > 0 ? n : fallback
}

const program = Effect.gen(function*() {
  const result = yield* runChaos({
    runs: envInt("CHAOS_RUNS", 400),
    durationMs: envInt("CHAOS_DURATION_MS", 180_000),
    concurrency: envInt("CHAOS_CONCURRENCY", 12),
    runners: envInt("CHAOS_RUNNERS", 3),
    killEveryMs: envInt("CHAOS_KILL_EVERY_MS", 8_000),
    restartAfterMs: envInt("CHAOS_RESTART_AFTER_MS", 4_000),
    maxKills: envInt("CHAOS_MAX_KILLS", 60),
    settleMs: envInt("CHAOS_SETTLE_MS", 60_000),
    maxParkMs: envInt("CHAOS_MAX_PARK_MS", 6_000),
    env: {}
  })
  const verdict = yield* assess(result)
  console.log(
    `${new Date().toISOString()} on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), load average ${
      os.loadavg().map((l) => l.toFixed(1)).join(" ")
    }`
  )
  console.log(report(result, verdict))
  const logDir = process.env["CHAOS_LOG_DIR"]
  if (logDir !== undefined) {
    mkdirSync(logDir, { recursive: true })
    for (const { name, output } of result.cluster.outputs()) {
      writeFileSync(join(logDir, `${name.replace(/[^\w#-]+/g, "_")}.log`), output)
    }
  }
  return verdict.violations.length
})

const violations = await Effect.runPromise(Effect.scoped(program))
process.exit(violations === 0 ? 0 : 1)

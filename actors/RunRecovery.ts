/**
 * The recovery pass, one per cluster (a singleton): runs that are active but
 * silent for SVC_RUN_STALL_MS (their runner died and nothing resumed them, or
 * their dispatch was lost) are started again through their entity (Start is
 * idempotent per run); a run still stalled after three attempts cannot be
 * resumed and is finalized as failed with terminalReason run_recovery_reaped.
 * Each pass also applies retention to the cluster's message storage (run
 * messages are deleted a day after their run ended). It runs on the
 * application's clock, so TestClock drives it in tests.
 */
import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { Singleton } from "effect/cluster"
import { ServiceConfig } from "../src/config/ServiceConfig.ts"
import { AgentLoop } from "../src/runs/AgentLoop.ts"
import { RunRepo } from "../src/runs/RunRepo.ts"
import { nowIso, toIso } from "../src/Time.ts"
import { RunEntity } from "./RunEntity.ts"

export const MaxRecoveryAttempts = 3
export const MessageRetentionMs = 24 * 60 * 60 * 1000

export const RunRecoveryLive = Layer.unwrap(
  Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const config = yield* ServiceConfig
    const repo = yield* RunRepo
    const loop = yield* AgentLoop
    const pass = Effect.gen(function*() {
      const client = yield* RunEntity.client
      yield* repo.purgeDeliveredMessages(toIso((yield* Clock.currentTimeMillis) - MessageRetentionMs))
      const before = toIso((yield* Clock.currentTimeMillis) - config.runStallMs)
      for (const runId of yield* repo.stalled(before)) {
        const attempts = yield* repo.bumpRecovery(runId, yield* nowIso)
        if (attempts > MaxRecoveryAttempts) yield* loop.reap(runId)
        else yield* client(runId).Start({ runId }, { discard: true }).pipe(Effect.orDie)
      }
    })
    return Singleton.make(
      "svc/RunRecovery",
      Effect.repeat(
        pass.pipe(Effect.catchCause((cause) => Effect.logError("recovery pass failed", cause))),
        Schedule.spaced(Duration.millis(config.recoveryIntervalMs))
      ).pipe(Effect.provideService(Clock.Clock, clock))
    )
  })
)

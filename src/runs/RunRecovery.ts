/**
 * The recovery pass, one per cluster (a singleton): runs whose executing
 * process stopped beating, runs still queued after QueuedStallMs (their
 * dispatch was lost), runs running with no executor after RedispatchAfterMs
 * (a resume's dispatch was lost, or a runner handed the run's shard to another
 * while executing it), and runs active but silent for SVC_RUN_STALL_MS (their
 * executor hung), are
 * started again through their entity (Start is idempotent per run); a run dispatched again five times without
 * completing a step in between cannot be resumed and is finalized as failed with terminalReason run_recovery_reaped.
 * Worker runs (subagents) are recovered the same way, on their own entity; a
 * worker finalized here wakes its root, a root finalized here stops its workers.
 * Each pass also cancels parked runs past their max-park window
 * (interaction_timeout) and applies retention to the cluster's message storage (run
 * messages are deleted a day after their run ended) and to the event log (a
 * run's stream is deleted SVC_EVENT_RETENTION_DAYS after it ended), and moves managed
 * workspaces through their lifecycle (idle ones hibernated, unused ones archived); artifacts are
 * purged SVC_ARTIFACT_RETENTION_DAYS after they were stored, or when their thread is deleted. It runs
 * on the application's clock, so TestClock drives it in tests.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Schedule, Semaphore } from "effect"
import { Singleton } from "effect/cluster"
import { RunTrees } from "../../actors/RunTrees.ts"
import { Artifacts } from "../artifacts/Artifacts.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { NodeDeadAfterMs } from "../store/NodeRepo.ts"
import { type Dispatch, RecoveryRepo } from "../store/RecoveryRepo.ts"
import { nowIso, toIso } from "../Time.ts"
import { WorkspaceLifecycle } from "../workspace/WorkspaceLifecycle.ts"
import { Finalize } from "./Finalize.ts"
import { retentionMs } from "./StreamRetention.ts"

export const MaxRecoveryAttempts = 5
/**
 * A run is queued only until its execution's first write (about 100 ms after its Start arrives):
 * one queued this long lost its Start (the runner it went to died) and is dispatched again.
 */
export const QueuedStallMs = 5_000
/**
 * A run the pass dispatched again is given this long to begin before the pass dispatches it once
 * more. A Start sent while the cluster still moves a dead runner's shards can be dropped by a
 * runner that does not yet know it owns the run's shard: each dispatch of the pass is sent a
 * second time after ConfirmDispatchAfter (1 s) when no execution has claimed the run by then
 * (RunTrees.redispatch), and the pass's next dispatch covers whatever is still lost.
 */
export const RedispatchAfterMs = 2_500
export const MessageRetentionMs = 24 * 60 * 60 * 1000
/** Retention needs no haste: at most one purge in this long. */
const PurgeIntervalMs = 10 * 60 * 1000

/** One recovery pass, runnable on its own (tests call it after moving the clock). */
export class RunRecovery
  extends Context.Service<RunRecovery, { readonly pass: Effect.Effect<void> }>()("svc/RunRecovery")
{
  static readonly layer = Layer.effect(RunRecovery)(Effect.gen(function*() {
    const config = yield* ServiceConfig
    const repo = yield* RecoveryRepo
    const finalize = yield* Finalize
    const trees = yield* RunTrees
    const workspaces = yield* WorkspaceLifecycle
    const artifacts = yield* Artifacts
    const scope = yield* Effect.scope
    let lastPurge = Number.NEGATIVE_INFINITY
    // One pass at a time: a pass asked for (tests, after moving the clock) waits for a scheduled one that is under way.
    const running = Semaphore.makeUnsafe(1)
    const pass = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (now - lastPurge >= PurgeIntervalMs) {
        lastPurge = now
        yield* repo.purgeDeliveredMessages(toIso(now - MessageRetentionMs))
        yield* repo.purgeStreams(toIso(now - retentionMs(config.eventRetentionDays)))
        yield* artifacts.purgeExpired
      }
      // Parked runs past their max-park window (the deadline is stored, so this holds across restarts).
      for (const runId of yield* repo.parkExpired(yield* nowIso)) {
        yield* finalize.expire(runId)
        yield* trees.afterEnd(runId)
      }
      // Runs whose process died (no heartbeat), then runs silent for too long (a lost dispatch, a hung executor).
      const nowMs = yield* Clock.currentTimeMillis
      const orphaned = yield* repo.orphaned(NodeDeadAfterMs, RedispatchAfterMs, Option.isSome(config.databaseUrl))
      const stalled = (yield* repo.stalled(
        toIso(nowMs - config.runStallMs),
        toIso(nowMs - QueuedStallMs),
        toIso(nowMs - RedispatchAfterMs)
      )).filter((s) => !orphaned.some((o) => o.id === s.id))
      const again: Array<Dispatch> = []
      for (const dispatch of [...orphaned, ...stalled]) {
        const attempts = yield* repo.bumpRecovery(dispatch.id, yield* nowIso)
        if (attempts > MaxRecoveryAttempts) {
          yield* finalize.reap(dispatch.id)
          yield* trees.afterEnd(dispatch.id)
        } else again.push(dispatch)
      }
      // In the background, together: each is confirmed a second later (the cluster may still be moving a
      // dead runner's shards), and the next pass need not wait for them.
      if (again.length > 0) {
        yield* Effect.forkIn(
          Effect.forEach(again, trees.redispatch, { concurrency: "unbounded", discard: true }),
          scope
        )
      }
      // Workspaces last: snapshotting a hibernating one takes time that failover must not wait for.
      yield* workspaces.sweep
    }).pipe(running.withPermits(1))
    return { pass }
  })).pipe(Layer.provide(RecoveryRepo.layer))
}

/** The pass as a cluster singleton, every SVC_RECOVERY_INTERVAL_MS of the application's clock. */
export const RunRecoveryLive = Layer.unwrap(
  Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const config = yield* ServiceConfig
    const { pass } = yield* RunRecovery
    return Singleton.make(
      "svc/RunRecovery",
      Effect.repeat(
        pass.pipe(Effect.catchCause((cause) => Effect.logError("recovery pass failed", cause))),
        Schedule.spaced(Duration.millis(config.recoveryIntervalMs))
      ).pipe(Effect.provideService(Clock.Clock, clock))
    )
  })
)

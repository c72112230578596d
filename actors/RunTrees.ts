/**
 * Run trees (subagents) around their executions: a run is dispatched on its
 * entity (a root by run id, a worker by `wkr_` reference); a parked run
 * resumes once every interaction it waits on is settled and every worker it
 * waits on has ended (a persisted-state check: nothing waits in memory); a
 * worker that ended wakes the run that delegated to it (the root, or a worker
 * of it: nested delegation); a root that ended stops every member of its tree
 * (cancelling the root, or its thread, cancels every member), a worker that
 * ended stops its own workers. A root shows `waiting_for_approval` /
 * `waiting_for_input` while a member waits on a person.
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import { Sharding } from "effect/cluster"
import type { RunId } from "../domain/Ids.ts"
import { isTerminal } from "../domain/Run.ts"
import type { Executed } from "../src/runs/AgentLoop.ts"
import { Delegation } from "../src/runs/Delegation.ts"
import { InteractionRepo } from "../src/store/InteractionRepo.ts"
import type { Dispatch } from "../src/store/RecoveryRepo.ts"
import { RunRepo, type RunRow } from "../src/store/RunRepo.ts"
import { WorkerRepo } from "../src/store/WorkerRepo.ts"
import { nowIso } from "../src/Time.ts"
import { RunEntity } from "./RunEntity.ts"
import { WorkerEntity } from "./WorkerEntity.ts"

/**
 * How long a dispatch after a failure waits for an execution to claim the run before it sends the
 * Start once more. The runner that owns the run's shard now may not know it yet (every runner reads
 * the assignments every 500 ms) and drops a Start that arrives before it does: a Start is sent
 * without waiting for an answer, so nobody hears of it, and the run would wait for the recovery
 * pass's next dispatch (RedispatchAfterMs, 2.5 s, measured by `npm run chaos` as a failover tail).
 */
export const ConfirmDispatchAfter = Duration.seconds(1)

/**
 * Sends, then once more after ConfirmDispatchAfter unless an execution took the run meanwhile.
 * `awaiting`: the run's latest claim while it still needs a Start (none once it ended or parked);
 * an execution that began claimed it (bumped the claim).
 */
export const sendConfirmed = (send: Effect.Effect<void>, awaiting: Effect.Effect<Option.Option<number>>) =>
  Effect.gen(function*() {
    const before = yield* awaiting
    yield* send
    if (Option.isNone(before)) return
    yield* Effect.sleep(ConfirmDispatchAfter)
    const after = yield* awaiting
    if (Option.isSome(after) && after.value === before.value) yield* send
  })

export class RunTrees extends Context.Service<RunTrees, {
  /** Starts (or resumes) the run on its entity; a dispatch that cannot be sent is the recovery pass's to repeat. */
  readonly dispatch: (run: Dispatch) => Effect.Effect<void>
  /**
   * A dispatch after a failure (the recovery pass, a hand-off), while the cluster may still be moving
   * shards: sent again once after ConfirmDispatchAfter if no execution has claimed the run meanwhile.
   */
  readonly redispatch: (run: Dispatch) => Effect.Effect<void>
  /** Resumes the parked run when it waits on nothing any more; else its root shows what its tree waits on. */
  readonly resumeIfReady: (runId: RunId) => Effect.Effect<void>
  /**
   * After an execution: a worker that ended wakes the run that delegated to it; a run that ended stops its
   * workers (a root, its whole tree), one that delegated resumes if its workers already ended.
   */
  readonly afterExecution: (executed: Executed) => Effect.Effect<void>
  /** After a run was finalized outside its loop (cancelled, expired, reaped): the same, read from storage. */
  readonly afterEnd: (runId: RunId) => Effect.Effect<void>
  /** Cancels a root run on its entity (a persisted Cancel), once it was received. */
  readonly cancel: (runId: RunId) => Effect.Effect<void>
}>()("svc/RunTrees") {
  static readonly layer = Layer.effect(RunTrees)(
    Effect.gen(function*() {
      const runs = yield* RunRepo
      const workers = yield* WorkerRepo
      const interactions = yield* InteractionRepo
      const delegation = yield* Delegation
      const sharding = yield* Sharding.Sharding
      const runClient = yield* RunEntity.client.pipe(Effect.provideService(Sharding.Sharding, sharding))
      const workerClient = yield* WorkerEntity.client.pipe(Effect.provideService(Sharding.Sharding, sharding))

      // Sent, not awaited: the Start request stays open while the run executes (so its entity is not evicted),
      // and a caller that stopped waiting would interrupt it. A Start that is lost (its runner died, or was still
      // starting) leaves the run queued, or running with no executor: the recovery pass dispatches it again.
      const dispatch = (run: Dispatch) =>
        (run.workerRef === null
          ? runClient(run.id).Start({ runId: run.id, generation: run.generation, created: run.created === true }, {
            discard: true
          })
          : workerClient(run.workerRef).Start({ runId: run.id, generation: run.generation }, { discard: true })).pipe(
            Effect.catchCause((cause) => Effect.logWarning("run dispatch failed; left to the recovery pass", cause))
          )

      /** The run's latest claim while it still needs a Start (neither ended nor parked). */
      const awaitingStart = (runId: RunId) =>
        Effect.map(
          runs.find(runId),
          Option.flatMap((row) =>
            isTerminal(row.run.status) || row.park !== null ? Option.none() : Option.some(row.attempt)
          )
        )
      const redispatch = Effect.fn("RunTrees.redispatch")(function*(run: Dispatch) {
        yield* sendConfirmed(dispatch(run), awaitingStart(run.id))
      })

      const resumeIfReady = Effect.fn("RunTrees.resumeIfReady")(function*(runId: RunId) {
        const found = yield* runs.find(runId)
        if (Option.isNone(found)) return
        const run: RunRow = found.value
        if (isTerminal(run.run.status) || run.park === null) return
        const root = run.plan?.worker?.rootRunId
        const pending = new Set(
          (yield* interactions.ofRun(runId)).filter((i) => i.interaction.status === "pending").map((i) => i.id)
        )
        if (run.park.pending.some((p) => pending.has(p.interactionId)) || (yield* delegation.waiting(run))) {
          if (root !== undefined || run.plan?.subagents === true) {
            yield* workers.refreshTreeStatus(root ?? runId, yield* nowIso)
          }
          return
        }
        // Running again from now on: stream followers keep following until the resumed step arrives.
        const now = yield* nowIso
        if (!(yield* runs.markResuming(runId, now))) return
        if (root !== undefined) yield* workers.refreshTreeStatus(root, now)
        yield* dispatch({ id: runId, generation: run.generation, workerRef: run.plan?.worker?.workerRef ?? null })
      })

      /**
       * Every member of a root's tree that has not ended is cancelled (persisted Cancel, on its own entity);
       * of a worker's, those it delegated to (each stops its own in turn).
       */
      const stopWorkers = Effect.fn("RunTrees.stopWorkers")(function*(row: RunRow) {
        const worker = row.plan?.worker
        const members = yield* workers.active(worker?.rootRunId ?? row.id)
        const active = worker === undefined
          ? members
          : members.filter((w) => w.plan?.worker?.parentRunId === row.id)
        yield* Effect.forEach(active, (w) =>
          workerClient(w.plan?.worker?.workerRef ?? "").Cancel({ runId: w.id }).pipe(
            Effect.catchCause((cause) => Effect.logWarning("worker cancel failed", cause))
          ), { concurrency: "unbounded", discard: true })
      })

      const afterRun = (row: RunRow, ended: boolean, delegated: boolean) =>
        Effect.gen(function*() {
          const worker = row.plan?.worker
          if (worker !== undefined && ended) yield* resumeIfReady(worker.parentRunId ?? worker.rootRunId)
          if (row.plan?.subagents !== true) return
          if (ended) return yield* stopWorkers(row)
          // Its workers may have ended before its park was stored: nobody else would wake it.
          if (delegated) yield* resumeIfReady(row.id)
        })

      return {
        dispatch,
        redispatch,
        resumeIfReady,
        afterExecution: ({ row, outcome }) =>
          afterRun(row, outcome._tag === "Completed" || outcome._tag === "Failed", outcome._tag === "Delegated"),
        afterEnd: Effect.fn("RunTrees.afterEnd")(function*(runId: RunId) {
          const found = yield* runs.find(runId)
          if (Option.isSome(found)) yield* afterRun(found.value, isTerminal(found.value.run.status), false)
        }),
        cancel: (runId) => runClient(runId).Cancel({ runId }).pipe(Effect.orDie)
      }
    })
  )
}

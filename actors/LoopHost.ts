/**
 * Behaviour shared by the run and worker entities: `Start` runs the agent
 * loop as the run's root fiber (forked, so `Cancel` is handled while it runs;
 * one execution at a time, so a redelivered Start and a resume's Start never
 * interleave: the later one reads the run afresh and finds it finished, still
 * parked, or resumable); `Cancel` marks the cancellation and interrupts that
 * fiber, whose finalizers record it, then finalizes the run if it is still
 * active (it was not executing here, or another execution had taken it).
 * After either, the run's tree is told (RunTrees). A Start stopped by
 * anything else (the runner handing the run's shard to another) sends the run
 * on to the shard's new owner. Handlers run on the clock the entity was built
 * with, not the cluster's (the same clock in production; TestClock in tests,
 * while the cluster's own timers stay real).
 */
import { Clock, Effect, Exit, Fiber, Layer, Ref, Schema, Semaphore } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { WorkerId } from "../domain/Ids.ts"
import { AgentLoop, type Executed } from "../src/runs/AgentLoop.ts"
import { Finalize } from "../src/runs/Finalize.ts"
import { EntityMaxIdleTime } from "./EntityResidency.ts"
import type { Cancel, Start } from "./RunEntity.ts"
import { RunTrees } from "./RunTrees.ts"

const decodeWorkerId = Schema.decodeSync(WorkerId)

// The clock is taken when the layer is built: the cluster runs each instance's build in its own context.
export const loopHost = <Type extends string>(entity: Entity.Entity<Type, typeof Start | typeof Cancel>) =>
  Layer.unwrap(Effect.map(Clock.Clock, (clock) =>
    entity.toLayer(
      Effect.gen(function*() {
        const loop = yield* AgentLoop
        const finalize = yield* Finalize
        const trees = yield* RunTrees
        const running = yield* Ref.make<Fiber.Fiber<Executed | undefined> | undefined>(undefined)
        const cancelRequested = yield* Ref.make(false)
        const oneAtATime = yield* Semaphore.make(1)
        const onOwnClock = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.provideService(effect, Clock.Clock, clock)
        // A worker's entity is addressed by its reference, a run's by its id.
        const workerRef = entity.type === "Worker" ? decodeWorkerId((yield* Entity.CurrentAddress).entityId) : null
        // Stopped by anything but a cancel (this runner handed the run's shard to another): the execution released
        // the run (AgentLoop); its Start goes again at once to the shard's new owner (and once more a second later
        // if no execution has claimed the run: RunTrees.redispatch) rather than waiting for the recovery pass.
        // While the process stops, it is not sent.
        const handOff = (payload: typeof Start.payloadSchema.Type) =>
          Effect.flatMap(Ref.get(cancelRequested), (cancelled) =>
            cancelled ? Effect.void : Effect.asVoid(Effect.forkDetach(
              Effect.logWarning("run handed off: its execution here stopped; sent to the shard's owner").pipe(
                Effect.andThen(trees.redispatch({ id: payload.runId, generation: payload.generation, workerRef })),
                Effect.timeout("10 seconds"),
                Effect.ignore({ log: "Warn", message: "run hand-off failed; left to the recovery pass" }),
                Effect.annotateLogs({ run_id: payload.runId })
              )
            )))
        return entity.of({
          Start: ({ payload }) =>
            Rpc.fork(
              onOwnClock(
                Effect.gen(function*() {
                  const exit = yield* Semaphore.withPermits(oneAtATime, 1)(Effect.gen(function*() {
                    const fiber = yield* Effect.forkChild(
                      loop.execute(payload.runId, Ref.get(cancelRequested), payload.created === true)
                    )
                    yield* Ref.set(running, fiber)
                    const exit = yield* Fiber.await(fiber)
                    yield* Ref.set(running, undefined)
                    return exit
                  }))
                  if (Exit.isSuccess(exit) && exit.value !== undefined) {
                    yield* trees.afterExecution(exit.value)
                  }
                }).pipe(Effect.onInterrupt(() =>
                  handOff(payload)
                ))
              )
            ),
          Cancel: ({ payload }) =>
            onOwnClock(Effect.gen(function*() {
              yield* Ref.set(cancelRequested, true)
              const fiber = yield* Ref.get(running)
              if (fiber !== undefined) yield* Fiber.interrupt(fiber)
              // Not executing here, or the execution interrupted had lost the run to a later one (on another
              // runner, which knows nothing of this cancel): the cancel claims the run and ends it, fencing that
              // one out. A run the interrupted execution ended already is left as it is.
              yield* finalize.cancelIdle(payload.runId)
              yield* trees.afterEnd(payload.runId)
            }))
        })
      }),
      { maxIdleTime: EntityMaxIdleTime }
    )))

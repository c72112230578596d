/**
 * Behaviour of the run entity: `Start` runs the agent loop as the run's root
 * fiber (forked, so `Cancel` is handled while it runs; one execution at a
 * time, so a redelivered Start and a resume's Start never interleave: the
 * later one reads the run afresh and finds it finished, still parked, or
 * resumable); `Cancel` marks the
 * cancellation and interrupts that fiber, whose finalizers record it, or
 * finalizes a run that is not executing here. Handlers run on the clock the
 * entity was built with, not the cluster's (the same clock in production;
 * TestClock in tests, while the cluster's own timers stay real).
 */
import { Clock, Effect, Fiber, Layer, Ref, Semaphore } from "effect"
import { Rpc } from "effect/rpc"
import { AgentLoop } from "../src/runs/AgentLoop.ts"
import { Finalize } from "../src/runs/Finalize.ts"
import { RunEntity } from "./RunEntity.ts"

// The clock is taken when the layer is built: the cluster runs each instance's build in its own context.
export const RunEntityLive = Layer.unwrap(Effect.map(Clock.Clock, (clock) => RunEntity.toLayer(
  Effect.gen(function*() {
    const loop = yield* AgentLoop
    const finalize = yield* Finalize
    const running = yield* Ref.make<Fiber.Fiber<void> | undefined>(undefined)
    const cancelRequested = yield* Ref.make(false)
    const oneAtATime = yield* Semaphore.make(1)
    const onOwnClock = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Clock.Clock, clock)
    return RunEntity.of({
      Start: ({ payload }) =>
        Rpc.fork(
          onOwnClock(Semaphore.withPermits(oneAtATime, 1)(Effect.gen(function*() {
            const fiber = yield* Effect.forkChild(loop.execute(payload.runId, Ref.get(cancelRequested)))
            yield* Ref.set(running, fiber)
            yield* Fiber.await(fiber)
            yield* Ref.set(running, undefined)
          })))
        ),
      Cancel: ({ payload }) =>
        onOwnClock(Effect.gen(function*() {
          yield* Ref.set(cancelRequested, true)
          const fiber = yield* Ref.get(running)
          if (fiber === undefined) return yield* finalize.cancelIdle(payload.runId)
          yield* Fiber.interrupt(fiber)
        }))
    })
  }),
  { maxIdleTime: "1 minute" }
)))

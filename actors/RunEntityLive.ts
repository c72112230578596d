/**
 * Behaviour of the run entity: `Start` runs the agent loop as the run's root
 * fiber (forked, so `Cancel` is handled while it runs); `Cancel` interrupts
 * that fiber, whose finalizers record the cancellation, or finalizes a run
 * that is not executing here.
 */
import { Effect, Fiber, Ref } from "effect"
import { Rpc } from "effect/rpc"
import { AgentLoop } from "../src/runs/AgentLoop.ts"
import { RunEntity } from "./RunEntity.ts"

export const RunEntityLive = RunEntity.toLayer(
  Effect.gen(function*() {
    const loop = yield* AgentLoop
    const running = yield* Ref.make<Fiber.Fiber<void> | undefined>(undefined)
    return RunEntity.of({
      Start: ({ payload }) =>
        Rpc.fork(
          Effect.gen(function*() {
            const fiber = yield* Effect.forkChild(loop.execute(payload.runId))
            yield* Ref.set(running, fiber)
            yield* Fiber.await(fiber)
            yield* Ref.set(running, undefined)
          })
        ),
      Cancel: ({ payload }) =>
        Effect.gen(function*() {
          const fiber = yield* Ref.get(running)
          if (fiber === undefined) return yield* loop.cancelIdle(payload.runId)
          yield* Fiber.interrupt(fiber)
        })
    })
  }),
  { maxIdleTime: "1 minute" }
)

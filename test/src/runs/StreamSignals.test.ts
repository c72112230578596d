/**
 * Who hears a stream write: the followers of that run, and watches not yet
 * bound to a run; nobody else. Subscriptions leave nothing behind when their
 * scope closes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Queue, Scope } from "effect"
import { StreamSignals } from "../../../src/runs/StreamSignals.ts"

const drained = <A>(queue: Queue.Queue<A>) => Queue.clear(queue)

describe("StreamSignals", () => {
  it.effect("a write wakes the followers of its run only; an unbound watch hears every run until bound", () =>
    Effect.gen(function*() {
      const signals = new StreamSignals()
      const scope = yield* Scope.make()
      const a1 = yield* Scope.provide(signals.subscribe("run_a"), scope)
      const a2 = yield* Scope.provide(signals.subscribe("run_a"), scope)
      const b = yield* Scope.provide(signals.subscribe("run_b"), scope)
      const watch = yield* Scope.provide(signals.subscribe(undefined), scope)

      signals.publish({ runId: "run_a", chunks: undefined })
      signals.publish({ runId: "run_c", chunks: undefined })
      assert.deepStrictEqual((yield* drained(a1.queue)).map((s) => s.runId), ["run_a"])
      assert.deepStrictEqual((yield* drained(a2.queue)).map((s) => s.runId), ["run_a"])
      assert.deepStrictEqual(yield* drained(b.queue), [])
      assert.deepStrictEqual((yield* drained(watch.queue)).map((s) => s.runId), ["run_a", "run_c"])

      signals.bind(watch, "run_b")
      signals.publish({ runId: "run_a", chunks: undefined })
      signals.publish({ runId: "run_b", chunks: undefined })
      assert.deepStrictEqual((yield* drained(watch.queue)).map((s) => s.runId), ["run_b"])
      assert.deepStrictEqual((yield* drained(b.queue)).map((s) => s.runId), ["run_b"])
      assert.deepStrictEqual(signals.size, { runs: 2, unbound: 0 })

      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(signals.size, { runs: 0, unbound: 0 })
    }))
})

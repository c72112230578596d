/**
 * A dispatch after a failure (recovery pass, hand-off) is sent once more a
 * second later when no execution has taken the run meanwhile: a runner that
 * does not yet know it owns the run's shard drops a Start that arrives too
 * early, unanswered. Not again when an execution claimed the run (its claim
 * moved on) or the run ended or parked, nor for a run that needed no Start.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import { sendConfirmed } from "../../../actors/RunTrees.ts"

/** Sends counted; the run's state (its claim while it awaits a Start) as the test sets it. */
const harness = (initial: Option.Option<number>) =>
  Effect.gen(function*() {
    const sent = yield* Ref.make(0)
    const state = yield* Ref.make(initial)
    const fiber = yield* Effect.forkChild(sendConfirmed(Ref.update(sent, (n) => n + 1), Ref.get(state)))
    yield* Effect.yieldNow
    return { sent, state, fiber }
  })

describe("confirmed dispatch", () => {
  it.effect("sent again after a second when nothing took the run, once", () =>
    Effect.gen(function*() {
      const { sent, fiber } = yield* harness(Option.some(3))
      assert.strictEqual(yield* Ref.get(sent), 1)
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(yield* Ref.get(sent), 1)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      assert.strictEqual(yield* Ref.get(sent), 2)
    }))

  // The run's state a moment after the first send: claimed by an execution, or ended or parked.
  for (
    const [what, meanwhile] of [["an execution claimed the run", Option.some(4)], [
      "the run ended or parked",
      Option.none()
    ]] as const
  ) {
    it.effect(`not sent again once ${what}`, () =>
      Effect.gen(function*() {
        const { sent, state, fiber } = yield* harness(Option.some(3))
        yield* Ref.set(state, meanwhile)
        yield* TestClock.adjust("1 second")
        yield* Fiber.join(fiber)
        assert.strictEqual(yield* Ref.get(sent), 1)
      }))
  }

  it.effect("a run that needed no Start is sent to once, with nothing to confirm", () =>
    Effect.gen(function*() {
      const { sent, fiber } = yield* harness(Option.none())
      yield* Fiber.join(fiber)
      assert.strictEqual(yield* Ref.get(sent), 1)
    }))
})

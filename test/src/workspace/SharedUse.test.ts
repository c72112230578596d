/**
 * SharedUse: one open per key shared by the users of that moment. The open
 * runs once for users that overlap, closes when the last one leaves (its
 * finalizers told who left last), and opens afresh for a later user; an open
 * that fails closes what it had opened and keeps nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as SharedUse from "../../../src/workspace/SharedUse.ts"

/** A use of `key` whose open records its opening and its closing (with who left last). */
const recorder = () => {
  const events: Array<string> = []
  let opens = 0
  const open = (last: () => string) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        opens += 1
        events.push(`open ${opens}`)
        return `workspace ${opens}`
      }),
      () => Effect.sync(() => void events.push(`close, told ${last()}`))
    )
  return { events, open }
}

describe("SharedUse", () => {
  it.effect("overlapping users share one open; it closes when the last leaves, told who that was; a later user opens afresh", () =>
    Effect.gen(function*() {
      const shared = SharedUse.make<string, never, string>()
      const { events, open } = recorder()
      const [root, worker] = [yield* Scope.make(), yield* Scope.make()]
      const a = yield* Scope.provide(root)(shared.use("thread_1", "root", open))
      const b = yield* Scope.provide(worker)(shared.use("thread_1", "worker", open))
      assert.deepStrictEqual([a, b], ["workspace 1", "workspace 1"])
      yield* Scope.close(root, Exit.void)
      assert.deepStrictEqual(events, ["open 1"])
      yield* Scope.close(worker, Exit.void)
      assert.deepStrictEqual(events, ["open 1", "close, told worker"])

      const later = yield* Effect.scoped(shared.use("thread_1", "next run", open))
      assert.strictEqual(later, "workspace 2")
      // Another key is another open.
      assert.strictEqual(yield* Effect.scoped(shared.use("thread_2", "other", open)), "workspace 3")
      assert.deepStrictEqual(events.slice(2), ["open 2", "close, told next run", "open 3", "close, told other"])
    }))

  it.effect("an open that fails closes what it had opened and keeps nothing: the next user opens again", () =>
    Effect.gen(function*() {
      const shared = SharedUse.make<string, string, string>()
      const { events, open } = recorder()
      const failing = (last: () => string) => Effect.andThen(open(last), Effect.fail("the sandbox did not start"))
      const failure = yield* Effect.flip(Effect.scoped(shared.use("thread_1", "first", failing)))
      assert.strictEqual(failure, "the sandbox did not start")
      assert.deepStrictEqual(events, ["open 1", "close, told first"])
      assert.strictEqual(yield* Effect.scoped(shared.use("thread_1", "second", open)), "workspace 2")
    }))
})

/**
 * The run's stream writer: a hold delays writes at most 100 ms (TestClock),
 * a follower sees its own run's chunks only (also through a watch taken
 * before the run existed), and the changes to the run's row made within one write are merged into one
 * update (PostgreSQL would apply only one of two updates of a row in one
 * statement), later changes winning.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { TestClock } from "effect/testing"
import { EventLog, runChange } from "../../../src/runs/EventLog.ts"
import * as RunStage from "../../support/RunStage.ts"

layer(RunStage.layer, { timeout: RunStage.setupTimeout })("EventLog writer", (it) => {
  it.effect("a held writer stores nothing until 100 ms have passed (TestClock), then what was held", () =>
    Effect.gen(function*() {
      const events = yield* EventLog
      const row = yield* RunStage.stageRun()
      const watch = yield* events.watch
      const writer = yield* events.writer(row.id, { fresh: true })
      yield* writer.hold
      yield* writer.emit({ type: "start", messageId: row.id })
      yield* writer.emit({ type: "start-step" })
      yield* TestClock.adjust("99 millis")
      assert.deepStrictEqual(yield* events.read(row.id, 0), [])
      yield* TestClock.adjust("1 millis")
      // Written by the hold's end alone (nothing flushes): the follower sees both chunks.
      const seen = yield* events.follow(row.id, 0, Effect.succeed(false), watch).pipe(Stream.take(2), Stream.runCollect)
      assert.deepStrictEqual(seen.map((c) => c.chunk.type), ["start", "start-step"])
    }).pipe(Effect.scoped))

  it.effect("a follower with a watch taken before its run existed sees its run's chunks, not another run's written meanwhile", () =>
    Effect.gen(function*() {
      const events = yield* EventLog
      const watch = yield* events.watch
      const other = yield* RunStage.stageRun()
      const row = yield* RunStage.stageRun()
      const otherWriter = yield* events.writer(other.id, { fresh: true })
      yield* otherWriter.emit({ type: "start", messageId: other.id })
      yield* otherWriter.flush
      const writer = yield* events.writer(row.id, { fresh: true })
      yield* writer.emit({ type: "start", messageId: row.id })
      yield* writer.emit({ type: "start-step" })
      yield* writer.flush
      yield* otherWriter.emit({ type: "start-step" })
      yield* otherWriter.flush
      const seen = yield* events.follow(row.id, 0, Effect.succeed(false), watch).pipe(Stream.take(2), Stream.runCollect)
      assert.deepStrictEqual(seen, [{ seq: 1, chunk: { type: "start", messageId: row.id } }, {
        seq: 2,
        chunk: { type: "start-step" }
      }])
    }).pipe(Effect.scoped))

  it.effect("changes to the run's row in one write are merged, later ones winning; other statements go in the same write", () =>
    Effect.gen(function*() {
      const events = yield* EventLog
      const row = yield* RunStage.stageRun()
      const writer = yield* events.writer(row.id, { fresh: true })
      yield* writer.hold
      yield* writer.emit({ type: "start", messageId: row.id })
      yield* writer.attach([
        runChange({ status: "running", startedAt: "2026-01-01T00:00:00.000Z", executor: "node_test" })
      ])
      yield* writer.emit({ type: "finish", finishReason: "stop" })
      yield* writer.commit([
        runChange({ status: "completed", terminalReason: null, completedAt: "2026-01-01T00:00:01.000Z" })
      ])
      const stored = yield* RunStage.reload(row.id)
      assert.strictEqual(stored.run.status, "completed")
      assert.strictEqual(stored.run.startedAt, "2026-01-01T00:00:00.000Z")
      assert.strictEqual(stored.run.completedAt, "2026-01-01T00:00:01.000Z")
      assert.deepStrictEqual((yield* events.read(row.id, 0)).map((c) => c.chunk.type), ["start", "finish"])
    }).pipe(Effect.scoped))
})

/**
 * The run entity's protocol (Start, Cancel) through `Entity.makeTestClient`
 * with its live behaviour (LoopHost) over the whole service's real parts on
 * PostgreSQL (the agent loop on the scripted model, finalization, run trees):
 * Start answers once its execution ended, or parked; a Start delivered again
 * finds nothing to do; Cancel interrupts an executing loop (here one waiting on
 * an approval hook that never answers) and records the cancellation, or
 * finalizes a run that is not executing; a Start after a Cancel does nothing.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { Entity } from "effect/cluster"
import { RunEntity } from "../../actors/RunEntity.ts"
import { RunEntityLive } from "../../actors/RunEntityLive.ts"
import { HookId, type RunId } from "../../domain/Ids.ts"
import { ToolApprovalHooks } from "../../src/interactions/ToolApprovalHooks.ts"
import { InteractionRepo } from "../../src/store/InteractionRepo.ts"
import { RunRepo } from "../../src/store/RunRepo.ts"
import * as EntityStage from "../support/EntityStage.ts"
import { hold, HookServer } from "../support/HookServer.ts"
import * as RunStage from "../support/RunStage.ts"

/** The run entity of `runId`, its live behaviour built afresh (the service built and shares its own, on its cluster). */
const runEntity = (runId: RunId) =>
  Effect.flatMap(Entity.makeTestClient(RunEntity, Layer.fresh(RunEntityLive)), (make) => make(runId))

const stage = (input: string, plan: Parameters<typeof RunStage.planWith>[0] = {}) =>
  RunStage.stageRun({ plan: RunStage.planWith({ input, ...plan }) })

layer(EntityStage.loopStage, { timeout: RunStage.setupTimeout })("RunEntity", (it) => {
  it.effect("Start executes the run to its end and answers once it ended; a Start delivered again does nothing", () =>
    Effect.gen(function*() {
      const row = yield* stage("/text All done.")
      const run = yield* runEntity(row.id)

      yield* run.Start({ runId: row.id, generation: 0, created: true })
      const ended = yield* RunStage.reload(row.id)
      assert.strictEqual(ended.run.status, "completed")
      const stream = yield* EntityStage.streamOf(row.id)
      assert.strictEqual(stream.text, "All done.")
      assert.deepStrictEqual(stream.types.slice(0, 2), ["start", "start-step"])
      assert.strictEqual(stream.types.at(-1), "finish")
      assert.isNull(yield* (yield* RunRepo).activeRun(row.run.threadId))

      yield* run.Start({ runId: row.id, generation: 0 })
      assert.deepStrictEqual(yield* RunStage.reload(row.id), ended)
      assert.deepStrictEqual((yield* EntityStage.streamOf(row.id)).types, stream.types)
    }))

  it.effect("Start answers once the run parked on a question; a Start delivered again while it waits does nothing", () =>
    Effect.gen(function*() {
      const question = JSON.stringify({ title: "Which color?", questions: [{ id: "c", prompt: "Color?" }] })
      const row = yield* stage(`/tool ask_question ${question}`, { userInteraction: true })
      const run = yield* runEntity(row.id)

      yield* run.Start({ runId: row.id, generation: 0, created: true })
      const parked = yield* RunStage.reload(row.id)
      assert.strictEqual(parked.run.status, "waiting_for_input")
      const asked = yield* (yield* InteractionRepo).ofRun(row.id)
      assert.deepStrictEqual(asked.map((i) => [i.interaction.kind, i.interaction.status]), [["question", "pending"]])
      assert.strictEqual((yield* EntityStage.streamOf(row.id)).types.at(-1), "finish")

      yield* run.Start({ runId: row.id, generation: parked.generation })
      assert.strictEqual((yield* RunStage.reload(row.id)).run.status, "waiting_for_input")
      assert.strictEqual((yield* (yield* InteractionRepo).ofRun(row.id)).length, 1)
    }))

  it.effect("Cancel interrupts the executing loop, records the cancellation and frees the thread; Start answers", () =>
    Effect.gen(function*() {
      const server = yield* HookServer
      const hook = yield* Effect.orDie((yield* ToolApprovalHooks).create(RunStage.principal, {
        name: "never answers",
        url: `${server.origin}/review`,
        secret: "whsec_run_entity_test"
      }))
      yield* server.answerWith(hold)
      const before = (yield* server.received).length
      const row = yield* stage("/tool lookup {}", { approvals: { toolExecution: { hookId: HookId.make(hook.id) } } })
      const run = yield* runEntity(row.id)

      const started = yield* Effect.forkChild(run.Start({ runId: row.id, generation: 0, created: true }))
      // The loop is waiting on the hook's review of its call.
      yield* server.awaitRequest(before + 1)
      assert.strictEqual((yield* RunStage.reload(row.id)).run.status, "running")

      yield* run.Cancel({ runId: row.id })
      yield* Fiber.join(started)
      yield* server.releaseHeld
      const cancelled = yield* RunStage.reload(row.id)
      assert.strictEqual(cancelled.run.status, "cancelled")
      assert.isNull(cancelled.run.terminalReason)
      assert.deepStrictEqual((yield* EntityStage.streamOf(row.id)).types.slice(-3), [
        "data-svc-terminal",
        "data-svc-usage",
        "abort"
      ])
      assert.isNull(yield* (yield* RunRepo).activeRun(row.run.threadId))
    }))

  it.effect("Cancel of a run not executing here finalizes it as cancelled; a Start after it does nothing", () =>
    Effect.gen(function*() {
      const row = yield* stage("/text Never said.")
      const run = yield* runEntity(row.id)

      yield* run.Cancel({ runId: row.id })
      const cancelled = yield* RunStage.reload(row.id)
      assert.strictEqual(cancelled.run.status, "cancelled")
      const stream = yield* EntityStage.streamOf(row.id)
      assert.deepStrictEqual(stream.types, ["start", "data-svc-terminal", "data-svc-usage", "abort"])
      assert.isNull(yield* (yield* RunRepo).activeRun(row.run.threadId))

      yield* run.Start({ runId: row.id, generation: 0 })
      assert.deepStrictEqual(yield* RunStage.reload(row.id), cancelled)
      assert.deepStrictEqual((yield* EntityStage.streamOf(row.id)).types, stream.types)
    }))
})

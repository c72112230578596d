/**
 * The worker entity's protocol (the run's Start and Cancel, addressed by the
 * worker's `wkr_` reference) through `Entity.makeTestClient` with its live
 * behaviour over the whole service's real parts: a Start executes the worker's
 * run, whose sub-stream opens with what its task is; a Cancel finalizes a
 * worker that is not executing. The root they belong to goes on either way
 * (it is not parked on them here). A worker that works in the thread's
 * workspace gets a reference whose shard is its root's (WorkerStarts.besideRoot).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Equal, Layer } from "effect"
import { Entity, EntityId, Sharding } from "effect/cluster"
import { RunEntity } from "../../actors/RunEntity.ts"
import { WorkerEntity } from "../../actors/WorkerEntity.ts"
import { WorkerEntityLive } from "../../actors/WorkerEntityLive.ts"
import { IdGenerator } from "../../src/IdGenerator.ts"
import { WorkerStarts } from "../../src/runs/Delegation.ts"
import { EventLog } from "../../src/runs/EventLog.ts"
import { WorkerRepo } from "../../src/store/WorkerRepo.ts"
import { nowIso } from "../../src/Time.ts"
import * as EntityStage from "../support/EntityStage.ts"
import * as RunStage from "../support/RunStage.ts"

/** A root run that delegates, and one queued worker of it whose task is `prompt`. */
const stageWorker = (prompt: string) =>
  Effect.gen(function*() {
    const root = yield* RunStage.stageRun({ plan: RunStage.planWith({ subagents: true }) })
    const ids = yield* IdGenerator
    const id = yield* ids.make("run")
    const workerRef = yield* ids.make("worker")
    const worker = { rootRunId: root.id, workerRef, role: "worker", label: "research", deadlineMs: null } as const
    yield* (yield* WorkerRepo).insert({
      id,
      workerRef,
      rootRunId: root.id,
      organizationId: RunStage.principal.organizationId,
      workspaceId: RunStage.principal.workspaceId,
      plan: RunStage.planWith({ input: prompt, worker }),
      run: RunStage.queuedRun(id, { threadId: root.run.threadId, agentId: root.run.agentId }, yield* nowIso)
    })
    const client = yield* Entity.makeTestClient(WorkerEntity, Layer.fresh(WorkerEntityLive))
    return { root, id, workerRef, entity: yield* client(workerRef) }
  })

layer(EntityStage.loopStage, { timeout: RunStage.setupTimeout })("WorkerEntity", (it) => {
  it.effect("Start, addressed by the worker's reference, executes its run: the sub-stream opens with its task", () =>
    Effect.gen(function*() {
      const { root, id, entity } = yield* stageWorker("/text Found three sources.")

      yield* entity.Start({ runId: id, generation: 0 })
      assert.strictEqual((yield* RunStage.reload(id)).run.status, "completed")
      const [opened, meta] = yield* (yield* EventLog).read(id, 0)
      assert.deepStrictEqual([opened.chunk, meta.chunk], [
        { type: "start", messageId: id },
        {
          type: "data-svc-worker-meta",
          data: { role: "worker", label: "research", status: "running", prompt: "/text Found three sources." }
        }
      ])
      const stream = yield* EntityStage.streamOf(id)
      assert.strictEqual(stream.text, "Found three sources.")
      assert.strictEqual(stream.types.at(-1), "finish")
      // Not parked on its workers: the root is left as it was.
      assert.deepStrictEqual(yield* RunStage.reload(root.id), root)
    }))

  it.effect("Cancel of a worker not executing finalizes it as cancelled; its root goes on", () =>
    Effect.gen(function*() {
      const { root, id, entity } = yield* stageWorker("/text Never said.")

      yield* entity.Cancel({ runId: id })
      assert.strictEqual((yield* RunStage.reload(id)).run.status, "cancelled")
      assert.deepStrictEqual((yield* EntityStage.streamOf(id)).types, [
        "start",
        "data-svc-terminal",
        "data-svc-usage",
        "abort"
      ])
      assert.deepStrictEqual(yield* RunStage.reload(root.id), root)
    }))

  it.effect("a worker beside its root: its reference's shard is the root run's (one runner for the tree), the same reference each time", () =>
    Effect.gen(function*() {
      const starts = yield* WorkerStarts
      const sharding = yield* Sharding.Sharding
      const ids = yield* IdGenerator
      const shardOf = (entity: typeof RunEntity | typeof WorkerEntity, id: string) =>
        sharding.getShardId(EntityId.make(id), entity.getShardGroup(EntityId.make(id)))
      for (const call of ["call_1", "call_2", "call_3", "call_4", "call_5"]) {
        const root = yield* ids.make("run")
        const candidate = (attempt: number) => ids.derive("worker", `${root}:${call}:${attempt}`)
        const placed = yield* starts.besideRoot(root, candidate)
        assert.isTrue(Equal.equals(shardOf(WorkerEntity, placed), shardOf(RunEntity, root)), `${placed} beside ${root}`)
        assert.strictEqual(yield* starts.besideRoot(root, candidate), placed)
      }
    }))
})

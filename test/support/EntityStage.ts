/**
 * The thread entity's surroundings for `Entity.makeTestClient`: the run
 * stage's real repositories on a fresh PostgreSQL database, follow-ups,
 * interactions and the real run-tree client (RunTrees) on an in-memory
 * cluster (`TestRunner`), whose run entity only records the messages it
 * receives (RunInbox). Runs are never executed here: a thread the entity
 * claimed stays claimed, so every answer is deterministic.
 */
import { Context, Effect, Layer, Queue } from "effect"
import { ShardingConfig, TestRunner } from "effect/cluster"
import { RunEntity, type Start } from "../../actors/RunEntity.ts"
import { RunTrees } from "../../actors/RunTrees.ts"
import type { RunId } from "../../domain/Ids.ts"
import { Interactions } from "../../src/interactions/Interactions.ts"
import { FollowupRepo } from "../../src/store/FollowupRepo.ts"
import * as RunStage from "./RunStage.ts"

/** What the run entities received, in arrival order. */
export class RunInbox extends Context.Service<RunInbox, {
  readonly starts: Queue.Queue<typeof Start.payloadSchema.Type>
  readonly cancels: Queue.Queue<RunId>
}>()("test/RunInbox") {
  static readonly layer = Layer.effect(RunInbox)(
    Effect.all({ starts: Queue.unbounded<typeof Start.payloadSchema.Type>(), cancels: Queue.unbounded<RunId>() })
  )
}

/** A run entity that records its messages and does nothing else. */
const recordingRuns = RunEntity.toLayer(Effect.gen(function*() {
  const inbox = yield* RunInbox
  return RunEntity.of({
    Start: ({ payload }) => Queue.offer(inbox.starts, payload).pipe(Effect.asVoid),
    Cancel: ({ payload }) => Queue.offer(inbox.cancels, payload.runId).pipe(Effect.asVoid)
  })
}))

const cluster = recordingRuns.pipe(
  Layer.provideMerge(RunInbox.layer),
  Layer.provideMerge(TestRunner.layer)
)

/** The stage: repositories, follow-ups, interactions, RunTrees on the in-memory cluster; ShardingConfig for the test client. */
export const layer = Layer.mergeAll(FollowupRepo.layer, Interactions.layer).pipe(
  Layer.provideMerge(RunTrees.layer),
  Layer.provideMerge(cluster),
  Layer.provideMerge(RunStage.layer),
  Layer.provideMerge(ShardingConfig.layer())
)

export { setupTimeout } from "./RunStage.ts"

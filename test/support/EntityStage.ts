/**
 * The entities' surroundings for `Entity.makeTestClient`, each on a fresh
 * PostgreSQL database.
 *
 * - `threadStage`: the run stage's real repositories, follow-ups, interactions
 *   and the real run-tree client (RunTrees) on an in-memory cluster
 *   (`TestRunner`), whose run entity only records the messages it receives
 *   (RunInbox). Runs are never executed there: a thread the entity claimed
 *   stays claimed, so every answer is deterministic.
 * - `loopStage`: the whole service (its agent loop, finalization and run
 *   trees are what the run and worker entities' live behaviour uses) and a hook
 *   server to hold a loop mid-step. Runs staged there are sent to the entity
 *   under test only.
 */
import { Context, Effect, Layer, Queue } from "effect"
import { ShardingConfig, TestRunner } from "effect/cluster"
import { RunEntity, type Start } from "../../actors/RunEntity.ts"
import { RunTrees } from "../../actors/RunTrees.ts"
import type { RunId } from "../../domain/Ids.ts"
import { Interactions } from "../../src/interactions/Interactions.ts"
import { EventLog } from "../../src/runs/EventLog.ts"
import { FollowupRepo } from "../../src/store/FollowupRepo.ts"
import { HookServer } from "./HookServer.ts"
import * as RunStage from "./RunStage.ts"
import * as TestServer from "./TestServer.ts"

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

/** Repositories, follow-ups, interactions, RunTrees on the in-memory cluster; ShardingConfig for the test client. */
export const threadStage = Layer.mergeAll(FollowupRepo.layer, Interactions.layer).pipe(
  Layer.provideMerge(RunTrees.layer),
  Layer.provideMerge(cluster),
  Layer.provideMerge(RunStage.layer),
  Layer.provideMerge(ShardingConfig.layer())
)

/** The whole service, a hook server, and ShardingConfig for the test client. */
export const loopStage = Layer.mergeAll(TestServer.layer(), HookServer.layer, ShardingConfig.layer())

/** The run's stream as stored: its chunk types in order and the text of its text deltas. */
export const streamOf = (runId: RunId) =>
  Effect.map(Effect.flatMap(EventLog, (log) => log.read(runId, 0)), (logged) => ({
    types: logged.map((e) => e.chunk.type),
    text: logged.flatMap((e) => (e.chunk.type === "text-delta" ? [e.chunk.delta] : [])).join("")
  }))

export { setupTimeout } from "./RunStage.ts"

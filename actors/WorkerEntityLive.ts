/**
 * Behaviour of the worker entity: the loop host (LoopHost.ts) for worker runs,
 * addressed by `wkr_` reference; and how the loop starts a worker and where it
 * runs (WorkerStarts).
 *
 * Where: the cluster places an entity on the runner that owns its shard, a
 * hash of its address (`hash(id) mod shardsPerGroup` in one shard group). A
 * worker that works in the thread's managed workspace must run where the
 * workspace is: on the runner of its tree's root, whose execution opened (and
 * last snapshotted) it. Its reference is therefore chosen among candidates
 * (derived from the delegating call, so a replayed step finds the same one)
 * as the first whose shard is the root's: one shard, so one runner, for the
 * whole tree, and the tree moves as one when the shard moves. About
 * shardsPerGroup (300) hashes per worker, microseconds.
 */
import { Effect, Equal, Layer } from "effect"
import { EntityId, Sharding } from "effect/cluster"
import type { WorkerId } from "../domain/Ids.ts"
import { WorkerStarts } from "../src/runs/Delegation.ts"
import { loopHost } from "./LoopHost.ts"
import { RunEntity } from "./RunEntity.ts"
import { WorkerEntity } from "./WorkerEntity.ts"

export const WorkerEntityLive = loopHost(WorkerEntity)

/** Candidates tried before giving up on placing a worker beside its root (each misses with p = 1 - 1/shards). */
export const MaxPlacementAttempts = 20_000

/** A start that cannot be sent is the recovery pass's to repeat: the worker's run is stored (queued). */
export const WorkerStartsLive = Layer.effect(WorkerStarts)(
  Effect.gen(function*() {
    const sharding = yield* Sharding.Sharding
    const client = yield* WorkerEntity.client
    const shardOf = (entity: typeof RunEntity | typeof WorkerEntity, id: string) => {
      const entityId = EntityId.make(id)
      return sharding.getShardId(entityId, entity.getShardGroup(entityId))
    }
    return {
      start: (workerRef, runId) =>
        client(workerRef).Start({ runId, generation: 0 }, { discard: true }).pipe(
          Effect.catchCause((cause) => Effect.logWarning("worker dispatch failed; left to the recovery pass", cause))
        ),
      besideRoot: (rootRunId, candidate) =>
        Effect.sync((): WorkerId => {
          const target = shardOf(RunEntity, rootRunId)
          for (let attempt = 0; attempt < MaxPlacementAttempts; attempt++) {
            const ref = candidate(attempt)
            if (Equal.equals(shardOf(WorkerEntity, ref), target)) return ref
          }
          return candidate(0)
        })
    }
  })
)

/**
 * Behaviour of the worker entity: the loop host (LoopHost.ts) for worker runs,
 * addressed by `wkr_` reference; and how the loop starts a worker (WorkerStarts).
 */
import { Effect, Layer } from "effect"
import { WorkerStarts } from "../src/runs/Delegation.ts"
import { loopHost } from "./LoopHost.ts"
import { WorkerEntity } from "./WorkerEntity.ts"

export const WorkerEntityLive = loopHost(WorkerEntity)

/** A start that cannot be sent is the recovery pass's to repeat: the worker's run is stored (queued). */
export const WorkerStartsLive = Layer.effect(WorkerStarts)(
  Effect.map(WorkerEntity.client, (client) => ({
    start: (workerRef, runId) =>
      client(workerRef).Start({ runId, generation: 0 }, { discard: true }).pipe(
        Effect.catchCause((cause) => Effect.logWarning("worker dispatch failed; left to the recovery pass", cause))
      )
  }))
)

/**
 * Protocol of the worker entity (one per delegated task, addressed by its
 * `wkr_` reference): the same messages as a run's, for the worker's own run.
 * The cluster's sharding places each worker: the tasks of one root spread
 * over the runners, but those that work in the thread's managed workspace
 * run on their root's (their reference is chosen for it: WorkerEntityLive);
 * a worker whose runner dies is dispatched again by the recovery pass and
 * resumes from its last checkpoint (as a run does).
 */
import { Entity } from "effect/cluster"
import { Cancel, Start } from "./RunEntity.ts"

export const WorkerEntity = Entity.make("Worker", [Start, Cancel])

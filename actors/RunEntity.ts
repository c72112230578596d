/**
 * Protocol of the run entity (one per run id). `Start` is not persisted: the
 * run's row is the durable record of its dispatch. The executing process
 * writes itself on the row as the run's executor and beats; when it dies, the
 * recovery pass dispatches the run again and it resumes from its last
 * checkpoint on whichever runner now owns it (a persisted message would cost
 * six database round trips a turn for the same guarantee). `Cancel` is
 * persisted and interrupts the run's fiber tree.
 */
import { Schema } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { RunId } from "../domain/Ids.ts"

/**
 * `generation` counts the run's parks: a Start of an older generation finds the run resumed already.
 * `created`: the Start that follows the run's creation; only it may execute the run from the row the
 * creating process holds in memory (any later Start, from the recovery pass or a hand-off, may find
 * the run executed elsewhere meanwhile, and reads it). A runner that stops interrupts its runs at
 * once rather than waiting on them (a run can take hours): they are left to be resumed from their
 * last checkpoint elsewhere; only Cancel cancels.
 */
export const Start = Rpc.make("Start", {
  payload: { runId: RunId, generation: Schema.Number, created: Schema.optional(Schema.Boolean) }
}).annotate(ClusterSchema.InterruptOnTermination, true)

export const Cancel = Rpc.make("Cancel", {
  payload: { runId: RunId }
}).annotate(ClusterSchema.Persisted, true)

export const RunEntity = Entity.make("Run", [Start, Cancel])

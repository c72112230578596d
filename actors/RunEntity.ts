/**
 * Protocol of the run entity (one per run id). `Start` is persisted: its reply
 * comes when the run reaches a terminal state, so a run whose runner dies is
 * started again on another runner (at-least-once) and resumes from its last
 * checkpoint. `Cancel` interrupts the run's fiber tree.
 */
import { Schema } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"

/** `generation` counts the run's parks: each resume is its own persisted message. */
export const Start = Rpc.make("Start", {
  payload: { runId: Schema.String, generation: Schema.Number },
  primaryKey: ({ runId, generation }) => `start:${runId}:${generation}`
}).annotate(ClusterSchema.Persisted, true)

export const Cancel = Rpc.make("Cancel", {
  payload: { runId: Schema.String }
}).annotate(ClusterSchema.Persisted, true)

export const RunEntity = Entity.make("Run", [Start, Cancel])

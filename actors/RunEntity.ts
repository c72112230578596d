/**
 * Protocol of the run entity (one per run id). `Start` is persisted: its reply
 * comes when the run reaches a terminal state, so a run whose runner dies is
 * started again on another runner (at-least-once) and resumes from its last
 * checkpoint. `Cancel` interrupts the run's fiber tree.
 */
import { Schema } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"

export const Start = Rpc.make("Start", {
  payload: { runId: Schema.String },
  primaryKey: ({ runId }) => `start:${runId}`
}).annotate(ClusterSchema.Persisted, true)

export const Cancel = Rpc.make("Cancel", {
  payload: { runId: Schema.String }
}).annotate(ClusterSchema.Persisted, true)

export const RunEntity = Entity.make("Run", [Start, Cancel])

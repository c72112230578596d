/**
 * Protocol of the thread entity (one per thread id): it serializes the turns
 * of its thread. `Begin` either starts the prepared run (claiming the thread)
 * or reports the run that holds it, holding a plain-text message as a
 * follow-up; `CancelActive` cancels whatever run holds the thread.
 */
import { Schema } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { FollowupId, InteractionId, RunId, ThreadId } from "../domain/Ids.ts"
import { Run } from "../domain/Run.ts"
import { RunPlan } from "../domain/RunPlan.ts"

/** A run prepared by the API node: every field of its row. */
export const PreparedRun = Schema.Struct({
  run: Run,
  plan: RunPlan,
  organizationId: Schema.String,
  workspaceId: Schema.String,
  idempotencyKey: Schema.NullOr(Schema.String),
  /** The message text, when it may be held as a follow-up of an active run. */
  holdableText: Schema.NullOr(Schema.String)
})
export type PreparedRun = typeof PreparedRun.Type

export const BeginResult = Schema.Union([
  /**
   * With `earlier`: this very request (same Idempotency-Key and input) had started that run, and
   * its answer was lost on the way (the node that handled it died); its Start is sent again.
   */
  Schema.TaggedStruct("Started", {
    earlier: Schema.optionalKey(Schema.Struct({ runId: RunId, createdAt: Schema.String }))
  }),
  /** The workspace has its maximum of active runs (SVC_MAX_ACTIVE_RUNS_PER_WORKSPACE); nothing was created. */
  Schema.TaggedStruct("Capped", {}),
  Schema.TaggedStruct("Busy", {
    activeRunId: Schema.NullOr(RunId),
    followupId: Schema.NullOr(FollowupId),
    resolvedInteractionId: Schema.NullOr(InteractionId)
  })
])
export type BeginResult = typeof BeginResult.Type

export const Begin = Rpc.make("Begin", { payload: { prepared: PreparedRun }, success: BeginResult })

export const CancelActive = Rpc.make("CancelActive", {
  payload: { threadId: ThreadId },
  success: Schema.NullOr(RunId)
})

export const ThreadEntity = Entity.make("Thread", [Begin, CancelActive])

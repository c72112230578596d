/**
 * A parked step (spec 3.1 waiting states): what a resumed run needs to finish
 * the step it stopped in. Stored on the run; the parked run holds no fiber.
 */
import { Schema } from "effect"
import { AssistantMessage, Message, ToolMessage } from "./Conversation.ts"
import { InteractionId, ToolCallId } from "./Ids.ts"
import { UsageTotal } from "./Run.ts"
import { PendingWorker } from "./Worker.ts"

export const PendingCall = Schema.Struct({
  toolCallId: ToolCallId,
  interactionId: InteractionId,
  kind: Schema.Literals(["approval_request", "question"]),
  /** Approval 'once': remember the approval for the thread when granted. */
  remember: Schema.Boolean
})
export type PendingCall = typeof PendingCall.Type

export const ParkRecord = Schema.Struct({
  step: Schema.Number,
  /** Follow-ups delivered at the start of the step. */
  pendingUser: Schema.Array(Message),
  assistant: AssistantMessage,
  /** Results of the step's calls that did not wait (run, denied). */
  settled: Schema.Array(ToolMessage),
  pending: Schema.Array(PendingCall),
  /** Delegated calls whose workers run meanwhile (subagents); absent in parks without any. */
  workers: Schema.optionalKey(Schema.Array(PendingWorker)),
  usage: UsageTotal
})
export type ParkRecord = typeof ParkRecord.Type

/** The max-park window (SVC_MAX_PARK_MS, about 14 days), or maxDurationMs when that is longer (spec 8). */
export const parkWindowMs = (maxParkMs: number, maxDurationMs: number | null): number =>
  Math.max(maxParkMs, maxDurationMs ?? 0)

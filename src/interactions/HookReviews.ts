/**
 * A hook's review as an interaction (spec 6.1: the request's `id` is a `tar_`
 * interaction id): every call the agent's hook reviewed has a record that
 * `GET /v1/interactions/:id` answers. A pause opens a pending approval when
 * the run parks (Parking); a call the review decided at once (the hook's
 * allow or deny, or `onHookError` when the hook failed) is recorded already
 * settled, its `resolution` naming who decided:
 *
 * - the hook's `allow` / `deny`: `resolved`, `decision` and `reason` the
 *   hook's, `resolution: { resolvedBy: "hook" }`;
 * - a failed hook under `onHookError: "deny"`: `resolved`, `decision: "deny"`,
 *   the reason the model reads, `resolution: { resolvedBy: "onHookError",
 *   onHookError: "deny", error }`;
 * - under `"fail-run"`: `cancelled`, `decision: "cancel"` (the call never ran
 *   and the run failed), `resolution: { resolvedBy: "onHookError",
 *   onHookError: "fail-run", error }`.
 *
 * Such a record was decided by the service, not by a person: resolving it
 * again with the same decision is 200, a different one 409 (Resolution.ts).
 */
import type { ToolCall } from "../../domain/Conversation.ts"
import type { AgentId, HookId, InteractionId, RunId, ThreadId, WorkerId } from "../../domain/Ids.ts"
import type { Interaction } from "../../domain/Interaction.ts"
import type { InteractionRow } from "../store/InteractionRepo.ts"

/** Who settled an interaction the service decided (`resolution.resolvedBy`); a person's answer has none. */
export const DecidedBy = ["hook", "onHookError"] as const

/** Whether the interaction was settled by a hook's review rather than by a person. */
export const decidedByReview = (interaction: Interaction): boolean => {
  const by = interaction.resolution?.["resolvedBy"]
  return DecidedBy.some((d) => d === by)
}

/** How the review ended for the call, as the gate decided it. */
export type ReviewEnd =
  | { readonly _tag: "Hook"; readonly decision: "allow" | "deny"; readonly reason: string | null }
  | {
    readonly _tag: "HookError"
    readonly onHookError: "deny" | "fail-run"
    readonly error: string
    /** What the model reads for a denied call. */
    readonly reason: string | null
  }

export interface ReviewedCall {
  readonly id: InteractionId
  readonly organizationId: string
  readonly workspaceId: string
  readonly runId: RunId
  readonly rootRunId: RunId
  readonly workerRef: WorkerId | null
  readonly threadId: ThreadId
  readonly agentId: AgentId
  readonly hookId: HookId
  /** 0-based, as the loop counts steps (the record's stepNumber is 1-based, as the hook's body). */
  readonly step: number
  readonly call: ToolCall
  readonly preview: Record<string, unknown>
  /** When the review request was sent, and when its end was known. */
  readonly sentAt: string
  readonly decidedAt: string
  readonly end: ReviewEnd
}

/** The settled interaction of a reviewed call. */
export const reviewRecord = (r: ReviewedCall): Omit<InteractionRow, "closedByRun"> => {
  const cancelled = r.end._tag === "HookError" && r.end.onHookError === "fail-run"
  const decision = r.end._tag === "Hook" ? r.end.decision : cancelled ? "cancel" : "deny"
  const resolution = r.end._tag === "Hook"
    ? { resolvedBy: "hook" }
    : { resolvedBy: "onHookError", onHookError: r.end.onHookError, error: r.end.error }
  return {
    id: r.id,
    createdAt: r.sentAt,
    organizationId: r.organizationId,
    workspaceId: r.workspaceId,
    deadline: null,
    interaction: {
      id: r.id,
      object: "interaction",
      runId: r.runId,
      rootRunId: r.rootRunId,
      workerRef: r.workerRef,
      threadId: r.threadId,
      agentId: r.agentId,
      kind: "approval_request",
      status: cancelled ? "cancelled" : "resolved",
      stepNumber: r.step + 1,
      toolName: r.call.name,
      toolCallId: r.call.id,
      hookId: r.hookId,
      input: r.call.input,
      preview: r.preview,
      decision,
      reason: r.end.reason,
      request: null,
      resolution,
      expiresAt: null,
      createdAt: r.sentAt,
      resolvedAt: r.decidedAt,
      updatedAt: r.decidedAt
    }
  }
}

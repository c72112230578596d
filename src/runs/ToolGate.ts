/**
 * The tool gate (spec 2.1.5, 4.6 rule 4, 6.1): whether a call runs now, waits
 * for a person, or is refused. The decision is GateDecision's; the gate looks
 * up what it asks for (the thread's remembered approvals, the agent's hook),
 * reports a hook's failure, records a review the hook (or onHookError)
 * decided as a settled interaction (HookReviews.ts) and remembers an approval
 * 'once'.
 */
import { Context, Effect, Layer } from "effect"
import type { ToolCall } from "../../domain/Conversation.ts"
import type { AgentId, RunId, ThreadId, WorkerId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { RunPlan } from "../../domain/RunPlan.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { type ReviewEnd, reviewRecord } from "../interactions/HookReviews.ts"
import { ToolApprovalHooks } from "../interactions/ToolApprovalHooks.ts"
import { ApprovalMemory } from "../store/ApprovalMemory.ts"
import { InteractionRepo } from "../store/InteractionRepo.ts"
import { nowIso } from "../Time.ts"
import type { Toolset } from "../tools/Toolset.ts"
import { decide, type Gate, type GateFacts, HookReview } from "./GateDecision.ts"
import { previewOf } from "./Outcome.ts"

export type { Gate, Waiting } from "./GateDecision.ts"

/** The run a gate decides for. */
export interface GateRun {
  readonly runId: RunId
  /** The run's tree (subagents): a worker's root and reference; absent or `workerRef` null for a root run. */
  readonly tree?: { readonly rootRunId: RunId; readonly workerRef: WorkerId | null }
  readonly threadId: ThreadId
  readonly agentId: AgentId
  readonly principal: Principal
  readonly plan: RunPlan
  readonly tools: Toolset
  /** Tells the stream that the hook failed (an `error` chunk). */
  readonly reportHookFailure: (message: string) => Effect.Effect<void>
}

/** How a review the hook (or onHookError) decided at once ended; undefined for a pause (the park records it). */
const reviewEnd = (review: HookReview, gate: Gate): ReviewEnd | undefined => {
  if (review._tag === "Answered") {
    const { decision, reason } = review.decision
    return decision === "pause" ? undefined : { _tag: "Hook", decision, reason: reason ?? null }
  }
  if (gate._tag === "Denied") {
    return { _tag: "HookError", onHookError: "deny", error: review.message, reason: gate.reason }
  }
  if (gate._tag === "FailRun") {
    return { _tag: "HookError", onHookError: "fail-run", error: review.message, reason: null }
  }
  return undefined
}

/** Decides one call of the step numbered `step` (0-based). */
export type GateFn = (call: ToolCall, step: number) => Effect.Effect<Gate>

export class ToolGate extends Context.Service<ToolGate, {
  /** The gate of one run: its hook is looked up (and its secret opened) once. */
  readonly forRun: (run: GateRun) => Effect.Effect<GateFn>
}>()("svc/ToolGate") {
  static readonly layer = Layer.effect(ToolGate)(
    Effect.gen(function*() {
      const hooks = yield* ToolApprovalHooks
      const memory = yield* ApprovalMemory
      const interactions = yield* InteractionRepo
      const config = yield* ServiceConfig
      const ids = yield* IdGenerator

      const forRun = Effect.fn("ToolGate.forRun")(function*(target: GateRun) {
        const { plan, tools } = target
        const hookId = plan.approvals?.toolExecution?.hookId
        const hook = hookId === undefined ? undefined : yield* hooks.forRun(target.principal, hookId)
        const autoAllow = new Set(plan.approvals?.autoAllow ?? [])

        /** Sends the call to the agent's hook for review. */
        const askHook = Effect.fn("ToolGate.askHook")(function*(
          active: NonNullable<typeof hook>,
          call: ToolCall,
          step: number
        ) {
          const interactionId = yield* ids.make("interaction")
          const workerRef = target.tree?.workerRef ?? null
          const answer = yield* hooks.review(active, {
            type: "tool_execution_review",
            id: interactionId,
            runId: target.runId,
            rootRunId: target.tree?.rootRunId ?? target.runId,
            // Only for worker calls (spec 6.1).
            ...(workerRef === null ? {} : { workerRef }),
            threadId: target.threadId,
            agentId: target.agentId,
            stepNumber: step + 1,
            toolName: call.name,
            toolCallId: call.id,
            input: call.input,
            preview: previewOf(call),
            resolveUrl: `${config.publicUrl}/v1/interactions/${interactionId}/resolve`
          }).pipe(Effect.result)
          return answer._tag === "Failure"
            ? HookReview.Failed({ interactionId, message: answer.failure.message })
            : HookReview.Answered({ interactionId, decision: answer.success.decision })
        })

        const gate: GateFn = Effect.fn("ToolGate.decide")(function*(call: ToolCall, step: number) {
          let facts: GateFacts<NonNullable<typeof hook>> = {
            isQuestion: tools.isQuestion(call.name),
            input: call.input,
            autoAllowed: autoAllow.has(call.name),
            policy: tools.policyOf(call.name),
            hook
          }
          let sentAt = ""
          for (;;) {
            const next = decide(facts)
            if (next._tag === "LookUpMemory") {
              facts = { ...facts, remembered: yield* memory.has(target.threadId, call.name, call.input) }
            } else if (next._tag === "AskHook") {
              sentAt = yield* nowIso
              facts = { ...facts, review: yield* askHook(next.hook, call, step) }
            } else {
              if (next.hookFailure !== null) yield* target.reportHookFailure(next.hookFailure)
              // Every reviewed call has its interaction: one decided at once is recorded settled.
              const review = facts.review
              const end = review === undefined ? undefined : reviewEnd(review, next.gate)
              if (review !== undefined && hook !== undefined && end !== undefined) {
                yield* interactions.insert(reviewRecord({
                  id: review.interactionId,
                  organizationId: target.principal.organizationId,
                  workspaceId: target.principal.workspaceId,
                  runId: target.runId,
                  rootRunId: target.tree?.rootRunId ?? target.runId,
                  workerRef: target.tree?.workerRef ?? null,
                  threadId: target.threadId,
                  agentId: target.agentId,
                  hookId: hook.id,
                  step,
                  call,
                  preview: previewOf(call),
                  sentAt,
                  decidedAt: yield* nowIso,
                  end
                }))
              }
              if (next.rememberApproval) yield* memory.remember(target.threadId, call.name, call.input, yield* nowIso)
              return next.gate
            }
          }
        })
        return gate
      })

      return { forRun }
    })
  )
}

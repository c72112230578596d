/**
 * The tool gate's decision (spec 2.1.5, 4.6 rule 4, 6.1) as a pure function of
 * what is known of one call. In order: ask_question always waits; autoAllow;
 * the connection's approval policy (waived, gated, or 'once' remembered for the
 * thread); then the agent's hook for calls the policy did not waive. Without a
 * hook a call the policy gates waits for a person.
 *
 * Two facts cost a round trip, so the decision asks for them only when it needs
 * them: the thread's remembered approvals (only under approval 'once') and the
 * hook's review (only for a call the policy did not waive). ToolGate looks up
 * what is asked for and decides again with the answer.
 */
import { Data, Result } from "effect"
import type { HookId, InteractionId } from "../../domain/Ids.ts"
import type { QuestionRequest } from "../../domain/Interaction.ts"
import type { HookDecision, OnHookError } from "../../domain/ToolApprovalHook.ts"
import * as Builtin from "../tools/BuiltinTools.ts"
import type { ToolPolicyRef } from "../tools/ToolFamily.ts"
import type { ToolOutcome } from "../tools/ToolOutcome.ts"

export type Gate = Data.TaggedEnum<{
  Run: {}
  Question: { readonly request: QuestionRequest }
  Approval: {
    readonly hookId: HookId | null
    readonly reason: string | null
    /** Approval 'once': an approval of this exact call is remembered for the thread. */
    readonly remember: boolean
    /** The id the hook already saw (its request's `id`). */
    readonly interactionId?: InteractionId
  }
  Denied: { readonly reason: string | null }
  FailRun: { readonly message: string }
  Invalid: { readonly outcome: ToolOutcome }
}>
export const Gate = Data.taggedEnum<Gate>()

export type Waiting = Data.TaggedEnum.Value<Gate, "Question" | "Approval">

/** The agent's hook, as far as the decision goes. */
export interface GateHook {
  readonly id: HookId
  readonly config: { readonly onHookError: OnHookError }
}

/** What became of one review request sent to the hook (`interactionId`: the request's `id`). */
export type HookReview = Data.TaggedEnum<{
  Answered: { readonly interactionId: InteractionId; readonly decision: HookDecision }
  Failed: { readonly interactionId: InteractionId; readonly message: string }
}>
export const HookReview = Data.taggedEnum<HookReview>()

export interface GateFacts<H extends GateHook> {
  /** The call is this run's ask_question (userInteraction is on). */
  readonly isQuestion: boolean
  readonly input: unknown
  /** The tool is listed in the agent's `approvals.autoAllow`. */
  readonly autoAllowed: boolean
  /** The approval policy of the connection offering the tool; undefined when no tool family claims it. */
  readonly policy: ToolPolicyRef | undefined
  /** The agent's hook; undefined without one, or when it is disabled. */
  readonly hook: H | undefined
  /** Whether the thread remembers an approval of this exact call; undefined until looked up. */
  readonly remembered?: boolean
  /** The hook's review of this call; undefined until asked. */
  readonly review?: HookReview
}

/** The decision, or the fact it needs next (`H`: the hook to ask). */
export type GateDecision<H> = Data.TaggedEnum<{
  Decided: {
    readonly gate: Gate
    /** The hook allowed a call under approval 'once': the approval is remembered for the thread. */
    readonly rememberApproval: boolean
    /** The hook could not answer: this is reported on the run's stream. */
    readonly hookFailure: string | null
  }
  LookUpMemory: {}
  AskHook: { readonly hook: H }
}>
interface GateDecisionDefinition extends Data.TaggedEnum.WithGenerics<1> {
  readonly taggedEnum: GateDecision<this["A"]>
}
export const GateDecision = Data.taggedEnum<GateDecisionDefinition>()

const decided = (
  gate: Gate,
  effects: { readonly rememberApproval?: boolean; readonly hookFailure?: string } = {}
): GateDecision<never> =>
  GateDecision.Decided({
    gate,
    rememberApproval: effects.rememberApproval ?? false,
    hookFailure: effects.hookFailure ?? null
  })

const run = Gate.Run()

/** The gate's answer to the hook's review; `remember`: the call is under approval 'once'. */
const reviewed = (hook: GateHook, review: HookReview, remember: boolean): GateDecision<never> => {
  const pause = Gate.Approval({ hookId: hook.id, reason: null, remember, interactionId: review.interactionId })
  if (review._tag === "Failed") {
    const hookFailure = `Approval hook failed: ${review.message}`
    switch (hook.config.onHookError) {
      case "pause":
        return decided(pause, { hookFailure })
      case "fail-run":
        return decided(Gate.FailRun({ message: `The approval hook failed: ${review.message}` }), { hookFailure })
      default:
        return decided(
          Gate.Denied({ reason: "The approval hook could not be reached, so the call was denied." }),
          { hookFailure }
        )
    }
  }
  const { decision, reason } = review.decision
  if (decision === "allow") return decided(run, { rememberApproval: remember })
  if (decision === "deny") return decided(Gate.Denied({ reason: reason ?? null }))
  return decided({ ...pause, reason: reason ?? null })
}

/** Decides one call from `facts`, or names the fact it needs next. */
export const decide = <H extends GateHook>(facts: GateFacts<H>): GateDecision<H> => {
  if (facts.isQuestion) {
    const request = Builtin.questionRequest(facts.input)
    return decided(
      Result.isSuccess(request)
        ? Gate.Question({ request: request.success })
        : Gate.Invalid({ outcome: request.failure })
    )
  }
  if (facts.autoAllowed) return decided(run)
  const policy = facts.policy
  const gated = policy !== undefined && policy.approval !== null && policy.approval !== "never" &&
    (policy.gatedTools === null || policy.gatedTools.includes(policy.originalName))
  const waived = policy !== undefined && policy.approval !== null && !gated
  if (waived) return decided(run)
  const remember = gated && policy.approval === "once"
  if (remember) {
    if (facts.remembered === undefined) return GateDecision.LookUpMemory()
    if (facts.remembered) return decided(run)
  }
  if (facts.hook === undefined) {
    return decided(gated ? Gate.Approval({ hookId: null, reason: null, remember }) : run)
  }
  if (facts.review === undefined) return GateDecision.AskHook({ hook: facts.hook })
  return reviewed(facts.hook, facts.review, remember)
}

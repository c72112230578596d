/**
 * The tool gate (spec 2.1.5, 4.6 rule 4, 6.1): whether a call runs now, waits
 * for a person, or is refused. In order: ask_question always waits; autoAllow;
 * the connection's approval policy (waived, gated, or 'once' remembered for the
 * thread); then the agent's hook for calls the policy did not waive. Without a
 * hook a call the policy gates waits for a person.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ToolCall } from "../../domain/Conversation.ts"
import type { AgentId, HookId, InteractionId, RunId, ThreadId } from "../../domain/Ids.ts"
import type { QuestionRequest } from "../../domain/Interaction.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { RunPlan } from "../../domain/RunPlan.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { ToolApprovalHooks } from "../interactions/ToolApprovalHooks.ts"
import { ApprovalMemory } from "../store/ApprovalMemory.ts"
import { nowIso } from "../Time.ts"
import * as Builtin from "../tools/BuiltinTools.ts"
import type { ToolOutcome } from "../tools/ToolFamily.ts"
import type { Toolset } from "../tools/Toolset.ts"
import { previewOf } from "./Outcome.ts"

export type Gate =
  | { readonly _tag: "Run" }
  | { readonly _tag: "Question"; readonly request: QuestionRequest }
  | {
    readonly _tag: "Approval"
    readonly hookId: HookId | null
    readonly reason: string | null
    /** Approval 'once': an approval of this exact call is remembered for the thread. */
    readonly remember: boolean
    /** The id the hook already saw (its request's `id`). */
    readonly interactionId?: InteractionId
  }
  | { readonly _tag: "Denied"; readonly reason: string | null }
  | { readonly _tag: "FailRun"; readonly message: string }
  | { readonly _tag: "Invalid"; readonly outcome: ToolOutcome }

export type Waiting = Extract<Gate, { readonly _tag: "Question" | "Approval" }>

/** The run a gate decides for. */
export interface GateRun {
  readonly runId: RunId
  /** The run's tree (subagents): a worker's root and reference; absent or `workerRef` null for a root run. */
  readonly tree?: { readonly rootRunId: RunId; readonly workerRef: string | null }
  readonly threadId: ThreadId
  readonly agentId: AgentId
  readonly principal: Principal
  readonly plan: RunPlan
  readonly tools: Toolset
  /** Tells the stream that the hook failed (an `error` chunk). */
  readonly reportHookFailure: (message: string) => Effect.Effect<void>
}

/** Decides one call of the step numbered `step` (0-based). */
export type GateFn = (call: ToolCall, step: number) => Effect.Effect<Gate>

const run: Gate = { _tag: "Run" }

export class ToolGate extends Context.Service<ToolGate, {
  /** The gate of one run: its hook is looked up (and its secret opened) once. */
  readonly forRun: (run: GateRun) => Effect.Effect<GateFn>
}>()("svc/ToolGate") {
  static readonly layer = Layer.effect(ToolGate)(
    Effect.gen(function*() {
      const hooks = yield* ToolApprovalHooks
      const memory = yield* ApprovalMemory
      const config = yield* ServiceConfig
      const ids = yield* IdGenerator

      const forRun = Effect.fn("ToolGate.forRun")(function*(target: GateRun) {
        const { plan, tools } = target
        const hookId = plan.approvals?.toolExecution?.hookId
        const hook = hookId === undefined ? undefined : yield* hooks.forRun(target.principal, hookId)
        const autoAllow = new Set(plan.approvals?.autoAllow ?? [])

        /** Asks the agent's hook; its answer, or onHookError when it cannot answer. */
        const askHook = Effect.fn("ToolGate.askHook")(function*(
          active: NonNullable<typeof hook>,
          call: ToolCall,
          step: number,
          remember: boolean
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
          if (answer._tag === "Failure") {
            const failure = answer.failure.message
            yield* target.reportHookFailure(`Approval hook failed: ${failure}`)
            switch (active.config.onHookError) {
              case "pause":
                return { _tag: "Approval", hookId: active.id, reason: null, remember, interactionId } satisfies Gate
              case "fail-run":
                return { _tag: "FailRun", message: `The approval hook failed: ${failure}` } satisfies Gate
              default:
                return {
                  _tag: "Denied",
                  reason: "The approval hook could not be reached, so the call was denied."
                } satisfies Gate
            }
          }
          const { decision } = answer.success
          if (decision.decision === "allow") {
            if (remember) yield* memory.remember(target.threadId, call.name, call.input, yield* nowIso)
            return run
          }
          if (decision.decision === "deny") return { _tag: "Denied", reason: decision.reason ?? null } satisfies Gate
          return {
            _tag: "Approval",
            hookId: active.id,
            reason: decision.reason ?? null,
            remember,
            interactionId
          } satisfies Gate
        })

        const gate: GateFn = Effect.fn("ToolGate.decide")(function*(call: ToolCall, step: number) {
          if (tools.isQuestion(call.name)) {
            const request = Builtin.questionRequest(call.input)
            return Option.isSome(request)
              ? { _tag: "Question", request: request.value } satisfies Gate
              : {
                _tag: "Invalid",
                outcome: {
                  output: { error: "invalid ask_question input" },
                  text: Builtin.invalidQuestionText,
                  isError: true
                }
              } satisfies Gate
          }
          if (autoAllow.has(call.name)) return run
          const policy = tools.policyOf(call.name)
          const gated = policy !== undefined && policy.approval !== null && policy.approval !== "never" &&
            (policy.gatedTools === null || policy.gatedTools.includes(policy.originalName))
          const waived = policy !== undefined && policy.approval !== null && !gated
          if (waived) return run
          const remember = gated && policy?.approval === "once"
          if (remember && (yield* memory.has(target.threadId, call.name, call.input))) return run
          if (hook === undefined) {
            return gated ? { _tag: "Approval", hookId: null, reason: null, remember } satisfies Gate : run
          }
          return yield* askHook(hook, call, step, remember)
        })
        return gate
      })

      return { forRun }
    })
  )
}

/**
 * The step loop of a run: follow-ups at each turn boundary, the caps
 * (maxSteps, budget), one model step, the tool gate, the calls that may run
 * (concurrently, child fibers of the run), delegated tasks (a worker each), a
 * park when some wait for a person or a worker, and the step's checkpoint
 * before its results are announced. It returns how the run ended;
 * finalization records it.
 */
import { Context, Effect, Layer } from "effect"
import type { AssistantMessage, Message, ToolCall } from "../../domain/Conversation.ts"
import type { QueuedFollowup, UsageTotal } from "../../domain/Run.ts"
import type { RunPlan } from "../../domain/RunPlan.ts"
import { SpendQuota } from "../access/SpendQuota.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import type { ModelProvider, ModelUnavailable } from "../model/ModelProvider.ts"
import type { Price } from "../model/Models.ts"
import { FollowupRepo } from "../store/FollowupRepo.ts"
import { RunRepo, type RunRow } from "../store/RunRepo.ts"
import * as GenAiSpan from "../telemetry/GenAiSpan.ts"
import { ServiceMetrics } from "../telemetry/ServiceMetrics.ts"
import { nowIso } from "../Time.ts"
import type { Overflow, ToolOutcome } from "../tools/ToolOutcome.ts"
import type { CallContext, Toolset } from "../tools/Toolset.ts"
import { Delegation, type Spawned } from "./Delegation.ts"
import { runChange, type Writer } from "./EventLog.ts"
import * as ModelStep from "./ModelStep.ts"
import { completed, denied, failed, inCallOrder, type Outcome, settle, type Settled } from "./Outcome.ts"
import { Parking } from "./Parking.ts"
import * as Progress from "./Progress.ts"
import * as StepGuards from "./StepGuards.ts"
import * as StructuredOutput from "./StructuredOutput.ts"
import type { GateFn } from "./ToolGate.ts"

/** Everything one execution of a run loops with. */
export interface LoopRun {
  readonly row: RunRow
  readonly plan: RunPlan
  readonly writer: Writer
  readonly model: ModelProvider
  readonly price: Price
  readonly system: string
  readonly tools: Toolset
  readonly gate: GateFn
  /** The conversation so far: the thread's earlier runs, this input, this run's checkpointed steps. */
  readonly messages: Array<Message>
  /** The bytes of the attachments and the inline view_media images of `messages`, by artifact id (AttachmentFiles.loader). */
  readonly files: (messages: ReadonlyArray<Message>) => Effect.Effect<ReadonlyMap<string, Uint8Array>>
  /** This run's calls so far (requiredSkills look at them). */
  readonly runCalls: Array<ToolCall>
  /** Checkpointed steps so far. */
  readonly step: number
  /** Claim follow-ups before the first step (a new run has none yet: the first boundary is after its first step). */
  readonly claimFirst: boolean
  /** Whether the run takes held follow-ups at its turn boundaries (a worker run does not: they are its root's). */
  readonly followups: boolean
  /** The run's running totals; the loop updates them, finalization reads them. */
  readonly usage: { current: UsageTotal }
  /** What the rest of the run's tree metered (subagents): the cost caps bound the whole tree. */
  readonly othersCost: Effect.Effect<number>
  /** The tree's maxDurationMs deadline (epoch ms), which bounds the workers this run delegates to. */
  readonly deadlineMs: number | null
}

/** The `data-svc-tool-result-overflow` chunk's data: the overflow and where the whole result went (its recovery's fields). */
const overflowData = (call: ToolCall, overflow: Overflow) => {
  const { kind, ...where } = overflow.recovery ?? { kind: "none" as const }
  return {
    toolCallId: call.id,
    toolName: call.name,
    bytes: overflow.bytes,
    capBytes: overflow.capBytes,
    recovery: kind,
    ...where
  }
}

/** Runs one call through the run's tools; an over-cap result is announced with where its whole text went. */
export const runTool = (tools: Toolset, writer: Writer) =>
  Effect.fn("StepLoop.runTool")(function*(call: ToolCall, context: CallContext) {
    const outcome: ToolOutcome = yield* tools.call(call, context)
    if (outcome.overflow !== undefined) {
      yield* writer.emit({ type: "data-svc-tool-result-overflow", data: overflowData(call, outcome.overflow) })
    }
    return outcome
  })

export class StepLoop extends Context.Service<StepLoop, {
  readonly run: (run: LoopRun) => Effect.Effect<Outcome, ModelUnavailable>
}>()("svc/StepLoop") {
  static readonly layer = Layer.effect(StepLoop)(
    Effect.map(
      Effect.all({
        repo: RunRepo,
        followups: FollowupRepo,
        parking: Parking,
        ids: IdGenerator,
        config: ServiceConfig,
        quota: SpendQuota,
        delegation: Delegation,
        metrics: ServiceMetrics
      }),
      (deps) => ({ run: loop(deps) })
    )
  )
}

interface Deps {
  readonly repo: RunRepo["Service"]
  readonly followups: FollowupRepo["Service"]
  readonly parking: Parking["Service"]
  readonly ids: IdGenerator["Service"]
  readonly config: ServiceConfig["Service"]
  readonly quota: SpendQuota["Service"]
  readonly delegation: Delegation["Service"]
  readonly metrics: ServiceMetrics["Service"]
}

const noSpawn: Spawned = { workers: [], refused: [] }

const loop = ({ repo, followups, parking, ids, config, quota, delegation, metrics }: Deps) =>
  Effect.fn("StepLoop.run")(function*(r: LoopRun) {
    const { row, plan, writer, tools, messages, runCalls, usage } = r
    const runId = row.id
    const call = runTool(tools, writer)
    const quotaSpent = quota.meter(row.organizationId, plan.spendAllowanceCents)
    let step = r.step

    // streamProgress: snapshots of what the run does and what it waits on (Progress.ts).
    const progress = Progress.make(runId, plan.streamProgress, writer)

    // Follow-ups claimed since the last checkpoint: they open the next checkpointed step.
    let pendingUser: Array<Message> = []
    const claim = r.followups ? Effect.flatMap(nowIso, (now) => followups.claim(runId, now)) : Effect.succeed([])
    const deliver = (claimed: ReadonlyArray<QueuedFollowup>) =>
      Effect.gen(function*() {
        for (const f of claimed) {
          yield* writer.emit({ type: "data-svc-followup-replayed", data: { followupId: f.id, text: f.text } })
          const message: Message = { role: "user", content: f.text }
          messages.push(message)
          pendingUser.push(message)
        }
        // Listed on the run until this mark is stored with the replay (after it, not before: no gap).
        if (claimed.length > 0) yield* writer.attach([followups.deliveredStatement(claimed.map((f) => f.id))])
        return claimed.length
      })

    /**
     * The step's checkpoint goes in the same write as its results and `finish-step`, so
     * nobody sees them before it is stored. After tool calls the write is awaited: the
     * next step must not begin on results that could still be lost.
     */
    const completeStep = (assistant: AssistantMessage, results: ReadonlyArray<Settled>) =>
      Effect.gen(function*() {
        const stepMessages = [...pendingUser, assistant, ...results.map((s) => s.message)]
        yield* writer.attach([
          repo.statements.checkpoint(runId, step, stepMessages, usage.current, yield* nowIso),
          runChange({ usage: usage.current, progressed: true })
        ])
        for (const s of results) for (const c of s.chunks) yield* writer.emit(c)
        yield* writer.emit({ type: "finish-step" })
        if (results.length > 0) yield* writer.flush
        messages.push(assistant, ...results.map((s) => s.message))
      })

    /**
     * A step past SVC_MAX_STEP_MS: its work was interrupted. Calls that finished show their
     * results, the others the lifecycle tool-output-error (they never finished, and the model
     * never reads them); the step closes and the run ends cleanly with the usage metered so
     * far. Nothing of the step is checkpointed.
     */
    const overran = (calls: ReadonlyArray<ToolCall>, finished: ReadonlyArray<Settled>) =>
      Effect.gen(function*() {
        for (const c of calls) {
          const done = finished.find((s) => s.message.toolCallId === c.id)
          for (
            const chunk of done?.chunks ?? [{
              type: "tool-output-error" as const,
              toolCallId: c.id,
              errorText: "step_duration_exceeded: the step ran past its time bound."
            }]
          ) yield* writer.emit(chunk)
        }
        yield* writer.emit({ type: "finish-step" })
        return StepGuards.stepOverrun
      })

    let claimNow = r.claimFirst
    while (true) {
      // An execution's first claim also takes what an earlier execution claimed but never delivered.
      if (claimNow && r.followups) {
        yield* Effect.flatMap(Effect.flatMap(nowIso, (now) => followups.claim(runId, now, true)), deliver)
      }
      claimNow = false
      if (step >= plan.maxSteps) return completed("max_steps_exceeded")
      // The cost caps count the whole run tree (a root and its workers).
      const spent = usage.current.costCents + (yield* r.othersCost)
      if (plan.budgetCents !== null && spent >= plan.budgetCents) return completed("budget_exceeded")
      if (StepGuards.overCeiling({ ...usage.current, costCents: spent }, config.maxRunCents)) {
        return completed("per_run_cap_exceeded")
      }
      if (yield* quotaSpent(spent)) return completed("insufficient_quota")
      // Without progress parts there is nothing to show before the model answers: the step's
      // opening chunks go in one write with its first answer chunks.
      if (!plan.streamProgress) yield* writer.hold
      yield* writer.emit({ type: "start-step" })
      yield* progress.activity("Thinking")
      const deadline = yield* StepGuards.stepDeadline(config.maxStepMs)
      const result = yield* StepGuards.within(
        deadline,
        GenAiSpan.traced(
          r.model.route,
          { runId, step },
          ModelStep.run(
            r.model,
            {
              system: r.system,
              messages,
              tools: tools.specs(),
              outputSchema: plan.outputSchema ?? undefined,
              files: yield* r.files(messages),
              mediaFidelity: row.run.config.mediaFidelity
            },
            writer,
            plan.streamReasoning,
            ids,
            `${runId}:${step}`
          )
        )
      )
      if (StepGuards.isOverrun(result)) return yield* overran([], [])
      metrics.recordTokens(r.model.route, result.tokens.inputTokens, result.tokens.outputTokens)
      usage.current = ModelStep.addUsage(usage.current, result.tokens, r.price)
      const assistant: AssistantMessage = { role: "assistant", content: result.text, toolCalls: result.calls }
      for (const c of result.calls) {
        yield* writer.emit({ type: "tool-input-start", toolCallId: c.id, toolName: c.name })
        yield* writer.emit({ type: "tool-input-available", toolCallId: c.id, toolName: c.name, input: c.input })
      }
      runCalls.push(...result.calls)
      if (result.calls.length > 0) {
        yield* progress.activity(`Working: ${result.calls.map((c) => c.name).join(", ")}`)
        // A tool call is stored before it fires, so a resumed run knows the step was under way.
        yield* writer.flush
      }
      // Each call is gated first (hooks answer one at a time); the ones allowed then run
      // concurrently, each a child fiber of the run, and delegated tasks get a worker each;
      // the ones waiting for a person or a worker park the step.
      const ran: Array<Settled> = []
      let spawned = noSpawn
      const gates = yield* StepGuards.within(
        deadline,
        Effect.gen(function*() {
          // A hook's review can take minutes (a person may be behind it): the wait is said.
          const gates = yield* Effect.forEach(
            result.calls,
            (c) =>
              Effect.map(
                progress.whileWaiting(r.gate(c, step), (ms) => progress.activity(Progress.reviewText(c, ms))),
                (gate) => ({ call: c, gate })
              )
          )
          if (gates.some((g) => g.gate._tag === "FailRun")) return gates
          const runnable = gates.flatMap((g) => (g.gate._tag === "Run" ? [g.call] : []))
          const delegated = runnable.filter((c) => tools.isDelegation(c.name))
          if (delegated.length > 0) spawned = yield* delegation.spawn(row, delegated, writer, r.deadlineMs)
          const ordinary = runnable.filter((c) => !tools.isDelegation(c.name))
          yield* progress.calls(
            ordinary.map((c) => ({ call: c })),
            ({ call: c }) =>
              Effect.map(call(c, { runCalls, resumed: false, step }), (outcome) => {
                // A tool's own model call (view_media's analysis) is the run's spend too.
                if (outcome.usage !== undefined) {
                  usage.current = ModelStep.addToolUsage(usage.current, outcome.usage, r.price)
                }
                ran.push(settle(c, outcome))
              })
          )
          return gates
        })
      )
      if (StepGuards.isOverrun(gates)) return yield* overran(result.calls, ran)
      const failRun = gates.flatMap((g) => (g.gate._tag === "FailRun" ? [g.gate] : []))[0]
      if (failRun !== undefined) return failed("approval_hook_failed", failRun.message)
      const settled = inCallOrder(result.calls, [
        ...ran,
        ...spawned.refused,
        ...gates.flatMap((g) => (g.gate._tag === "Invalid" ? [settle(g.call, g.gate.outcome)] : [])),
        ...gates.flatMap((g) => (g.gate._tag === "Denied" ? [denied(g.call, g.gate.reason)] : []))
      ])
      const waits = gates.flatMap((
        g
      ) => (g.gate._tag === "Question" || g.gate._tag === "Approval" ? [{ call: g.call, gate: g.gate }] : []))
      if (waits.length > 0 || spawned.workers.length > 0) {
        return yield* parking.park({
          row,
          writer,
          step,
          pendingUser,
          assistant,
          settled,
          waits,
          workers: spawned.workers,
          usage: usage.current
        })
      }
      // A turn boundary: messages held meanwhile open the next step (one more step of this turn after an answer).
      let claimed: ReadonlyArray<QueuedFollowup>
      if (result.calls.length > 0) {
        // The results are stored with the checkpoint while follow-ups are claimed.
        claimed = (yield* Effect.all([completeStep(assistant, settled), claim], { concurrency: 2 }))[1]
      } else {
        // Held back until the run's end: the step's last chunks, its checkpoint and the end go in one write.
        yield* writer.hold
        claimed = yield* claim
        yield* completeStep(assistant, settled)
      }
      pendingUser = []
      step += 1
      const delivered = yield* deliver(claimed)
      if (delivered === 0 && StepGuards.repeatStreak(messages) >= StepGuards.RepeatLimit) {
        return StepGuards.loopHalted([...new Set(result.calls.map((c) => c.name))])
      }
      if (result.calls.length === 0) {
        if (delivered > 0) continue
        if (plan.outputSchema === null) return completed(null)
        const extracted = yield* StructuredOutput.extract(result.text, plan.outputSchema)
        if (extracted._tag === "Invalid") {
          yield* writer.emit({ type: "error", errorText: `No structured output: ${extracted.message}.` })
        }
        return completed(null, extracted._tag === "Value" ? extracted.value : undefined)
      }
    }
  })

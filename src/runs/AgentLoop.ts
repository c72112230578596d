/**
 * The agent loop of one run: model step, tool calls, checkpoint, repeat,
 * until the model answers without tool calls or a cap stops it. It resumes
 * from the last checkpoint (never repeating a completed step), writes every
 * chunk through the run's EventLog writer, and always ends with a terminal
 * status: `completed` (caps end runs cleanly, with terminalReason set),
 * `failed` (upstream_unavailable, pricing_unavailable, engine faults) or
 * `cancelled` (interruption).
 */
import { Clock, Context, Duration, Effect, Layer, Option, Schedule, Schema, type Scope, Stream } from "effect"
import type { AssistantMessage, Message, ToolCall, ToolMessage, ToolSpec } from "../../domain/Conversation.ts"
import { AskQuestionInput, type Interaction, type QuestionRequest } from "../../domain/Interaction.ts"
import { newIdSync } from "../Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import { isTerminal, type RunError, type UsageTotal, ZeroUsage } from "../../domain/Run.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { costCents, Models, type Price } from "../model/Models.ts"
import type { ModelProvider } from "../model/ModelProvider.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { Secrets } from "../secrets/Secrets.ts"
import { nowIso, toIso } from "../Time.ts"
import * as HttpTools from "../tools/HttpTools.ts"
import { McpSessions } from "../tools/McpSessions.ts"
import * as McpTools from "../tools/McpTools.ts"
import * as SpecCache from "../tools/SpecCache.ts"
import * as ToolResults from "../tools/ToolResults.ts"
import { type Chunk, EventLog, type Writer } from "./EventLog.ts"
import { InteractionRepo } from "../interactions/InteractionRepo.ts"
import { ApprovalMemory } from "../interactions/ApprovalMemory.ts"
import { ToolApprovalHooks } from "../hooks/ToolApprovalHooks.ts"
import { type ParkRecord, parkWindowMs } from "./Park.ts"
import { FollowupRepo } from "./FollowupRepo.ts"
import type { RunPlan } from "./RunPlan.ts"
import { RunRepo, type RunRow } from "./RunRepo.ts"
import * as StructuredOutput from "./StructuredOutput.ts"

type Outcome =
  | { readonly _tag: "Completed"; readonly terminalReason: string | null; readonly output: unknown }
  | { readonly _tag: "Failed"; readonly error: RunError; readonly terminalReason: string | null }
  | { readonly _tag: "Parked" }
  /** Started again (a redelivered Start) while its interactions are still pending: nothing to add to the stream. */
  | { readonly _tag: "StillParked" }

type Gate =
  | { readonly _tag: "Run" }
  | { readonly _tag: "Question"; readonly request: QuestionRequest }
  | {
    readonly _tag: "Approval"
    readonly hookId: string | null
    readonly reason: string | null
    /** Approval 'once': an approval of this exact call is remembered for the thread. */
    readonly remember: boolean
    /** The id the hook already saw (its request's `id`). */
    readonly interactionId?: string
  }
  | { readonly _tag: "Denied"; readonly reason: string | null }
  | { readonly _tag: "FailRun"; readonly message: string }
  | { readonly _tag: "Invalid"; readonly outcome: McpTools.ToolOutcome }

/** A denied call: the model reads the reason verbatim; the stream shows tool-output-denied. */
const denied = (call: ToolCall, reason: string | null): Settled => ({
  message: { role: "tool", toolCallId: call.id, toolName: call.name, content: reason ?? "The tool call was denied.", isError: true },
  chunk: { type: "tool-output-denied", toolCallId: call.id }
})

/** A short summary for people reviewing a call. */
const previewOf = (call: ToolCall): Record<string, unknown> => ({
  toolName: call.name,
  summary: `${call.name}(${JSON.stringify(call.input).slice(0, 200)})`
})

/** A tool call's result: what the model reads and the chunk that announces it. */
interface Settled {
  readonly message: ToolMessage
  readonly chunk: Chunk
}

const settle = (call: ToolCall, outcome: McpTools.ToolOutcome): Settled => ({
  message: { role: "tool", toolCallId: call.id, toolName: call.name, content: outcome.modelText ?? outcome.text, isError: outcome.isError },
  chunk: outcome.isError
    ? { type: "tool-output-error", toolCallId: call.id, errorText: outcome.text }
    : { type: "tool-output-available", toolCallId: call.id, output: outcome.output }
})

const inCallOrder = (calls: ReadonlyArray<ToolCall>, settled: ReadonlyArray<Settled>): Array<Settled> =>
  calls.flatMap((call) => settled.filter((s) => s.message.toolCallId === call.id))

const decodeAskQuestion = Schema.decodeUnknownOption(AskQuestionInput)

/** The stored request: question flags resolved to booleans. */
const toRequest = (input: AskQuestionInput): QuestionRequest => ({
  title: input.title,
  ...(input.details === undefined ? {} : { details: input.details }),
  ...(input.questions === undefined ? {} : {
    questions: input.questions.map((q) => ({
      id: q.id,
      prompt: q.prompt,
      ...(q.options === undefined ? {} : { options: q.options }),
      multiple: q.multiple ?? false,
      multiline: q.multiline ?? false,
      allowOther: q.allowOther ?? false
    }))
  }),
  ...(input.actions === undefined ? {} : { actions: input.actions })
})

/** What a resumed step's question call returns to the model: the person's answers. */
const answerText = (interaction: Interaction): string =>
  interaction.status === "cancelled"
    ? "The user dismissed the question without answering."
    : JSON.stringify({ answers: interaction.resolution?.["inputResponses"] ?? [], ...(interaction.reason === null ? {} : { reason: interaction.reason }) })

const askQuestionSpec: ToolSpec = {
  name: "ask_question",
  description:
    "Ask the user one or more questions and wait for the answers. Use options for choices; multiple allows several; multiline or allowOther allow free text; actions are buttons that answer the whole request.",
  inputSchema: {
    type: "object",
    properties: {
      title: { type: "string" },
      details: { type: "string" },
      questions: {
        type: "array",
        items: {
          type: "object",
          properties: {
            id: { type: "string" },
            prompt: { type: "string" },
            options: { type: "array", items: { type: "object", properties: { id: { type: "string" }, label: { type: "string" } }, required: ["id", "label"] } },
            multiple: { type: "boolean" },
            multiline: { type: "boolean" },
            allowOther: { type: "boolean" }
          },
          required: ["id", "prompt"]
        }
      },
      actions: { type: "array", items: { type: "object", properties: { id: { type: "string" }, label: { type: "string" } }, required: ["id", "label"] } }
    },
    required: ["title"]
  }
}

const addUsage = (total: UsageTotal, step: { readonly inputTokens: number; readonly outputTokens: number }, price: Price) => ({
  inputTokens: total.inputTokens + step.inputTokens,
  outputTokens: total.outputTokens + step.outputTokens,
  totalTokens: total.totalTokens + step.inputTokens + step.outputTokens,
  costCents: total.costCents + costCents(price, step.inputTokens, step.outputTokens),
  steps: total.steps + 1
})

/** The system prompt: durable context blocks, the current time in the run's zone, then the inline skills. */
const systemPrompt = (plan: RunPlan, nowMillis: number, timeZone: string, untrustedTools: boolean, deferredTools: boolean): string => {
  const local = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    dateStyle: "full",
    timeStyle: "long"
  }).format(nowMillis)
  const parts = [...plan.context, `Current date and time: ${local} (${timeZone}).`]
  if (plan.skills.length > 0) {
    parts.push(
      "Skills you can load with the load_skill tool:\n" +
        plan.skills.map((s) => `- ${s.name}: ${s.description}`).join("\n")
    )
  }
  if (deferredTools) {
    parts.push("Some tools are listed without their input schema. Call load_tools with their names to load the schemas before calling them.")
  }
  if (untrustedTools) parts.push(ToolResults.untrustedNotice)
  return parts.join("\n\n")
}

const loadToolsSpec: ToolSpec = {
  name: "load_tools",
  description: "Load the full input schemas of tools listed without one, by name, before calling them.",
  inputSchema: { type: "object", properties: { names: { type: "array", items: { type: "string" } } }, required: ["names"] }
}

/** What a deferred tool offers until its schema is loaded. */
const DeferredSchema = { type: "object", additionalProperties: true }

const namesOf = (input: unknown): ReadonlyArray<string> =>
  typeof input === "object" && input !== null && "names" in input && Array.isArray(input.names) ? input.names.map(String) : []

const skillNameOf = (input: unknown): string =>
  typeof input === "object" && input !== null && "name" in input ? String(input.name) : ""

const loadSkillSpec: ToolSpec = {
  name: "load_skill",
  description: "Load the full instructions of one of your skills by name.",
  inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
}

export class AgentLoop extends Context.Service<AgentLoop, {
  /**
   * Runs (or resumes) the run to a terminal state. An interruption finalizes
   * it as cancelled only when `cancelRequested` says so; any other
   * interruption (the runner stopping, the shard moving) leaves it to be
   * resumed from its last checkpoint by the redelivered Start message.
   */
  readonly execute: (runId: string, cancelRequested: Effect.Effect<boolean>) => Effect.Effect<void>
  /** Finalizes a run that is not executing here as cancelled. */
  readonly cancelIdle: (runId: string) => Effect.Effect<void>
  /** A parked run past its max-park window: cancelled with interaction_timeout, interactions cancelled, thread freed. */
  readonly expire: (runId: string) => Effect.Effect<void>
  /** Finalizes a run that cannot be resumed: failed, terminalReason run_recovery_reaped. */
  readonly reap: (runId: string) => Effect.Effect<void>
}>()("svc/AgentLoop") {
  static readonly layer = Layer.effect(AgentLoop)(
    Effect.gen(function*() {
      const repo = yield* RunRepo
      const followups = yield* FollowupRepo
      const interactions = yield* InteractionRepo
      const memory = yield* ApprovalMemory
      const hooks = yield* ToolApprovalHooks
      const events = yield* EventLog
      const models = yield* Models
      const outbound = yield* Outbound
      const secrets = yield* Secrets
      const sessions = yield* McpSessions
      const config = yield* ServiceConfig
      const specs = SpecCache.make(outbound.fetch)

      const finalize = Effect.fn("AgentLoop.finalize")(function*(
        row: RunRow,
        writer: Writer,
        outcome: Outcome,
        usage: UsageTotal
      ) {
        if (outcome._tag === "StillParked") return
        const now = yield* nowIso
        if (outcome._tag === "Parked") {
          // The stream of this turn ends here; it goes on in the same log when the run resumes.
          yield* writer.emit({ type: "finish", finishReason: "other" })
          return yield* writer.flush
        }
        if (outcome._tag === "Failed") {
          yield* writer.emit({ type: "error", errorText: outcome.error.message })
        }
        const output = outcome._tag === "Completed" ? outcome.output : undefined
        yield* writer.emit({
          type: "data-svc-terminal",
          data: { terminalReason: outcome.terminalReason, ...(output === undefined ? {} : { output }) }
        })
        yield* writer.emit({ type: "data-svc-usage", data: usage })
        yield* writer.emit({ type: "finish", finishReason: outcome._tag === "Completed" ? "stop" : "error" })
        yield* writer.commit(
          Effect.andThen(
            repo.setStatus(row.id, {
              status: outcome._tag === "Completed" ? "completed" : "failed",
              terminalReason: outcome.terminalReason,
              error: outcome._tag === "Failed" ? outcome.error : null,
              usage,
              completedAt: now
            }, now),
            repo.releaseThread(row.run.threadId, row.id, now)
          )
        )
      })

      const finalizeCancelled = Effect.fn("AgentLoop.finalizeCancelled")(function*(row: RunRow, writer: Writer) {
        const now = yield* nowIso
        yield* writer.emit({ type: "abort", reason: "cancelled" })
        yield* writer.commit(
          Effect.all([
            repo.setStatus(row.id, { status: "cancelled", completedAt: now }, now),
            repo.releaseThread(row.run.threadId, row.id, now),
            interactions.cancelPending(row.id, now),
            repo.clearPark(row.id, now)
          ], { discard: true })
        )
      })

      /** One model step: streams text and reasoning as chunks, collects tool calls. */
      const modelStep = (model: ModelProvider, plan: RunPlan, writer: Writer, system: string, messages: ReadonlyArray<Message>, tools: ReadonlyArray<ToolSpec>) =>
        Effect.gen(function*() {
          let text = ""
          let textId: string | undefined
          let reasoningId: string | undefined
          const calls: Array<ToolCall> = []
          let tokens = { inputTokens: 0, outputTokens: 0 }
          yield* model.stream({ system, messages, tools, outputSchema: plan.outputSchema ?? undefined }).pipe(
            Stream.runForEach((event) =>
              Effect.gen(function*() {
                switch (event._tag) {
                  case "ReasoningDelta": {
                    if (!plan.streamReasoning) return
                    if (reasoningId === undefined) {
                      reasoningId = newIdSync("toolCall").replace("tc_", "rs_")
                      yield* writer.emit({ type: "reasoning-start", id: reasoningId })
                    }
                    yield* writer.emit({ type: "reasoning-delta", id: reasoningId, delta: event.text })
                    return
                  }
                  case "TextDelta": {
                    if (textId === undefined) {
                      textId = newIdSync("toolCall").replace("tc_", "txt_")
                      yield* writer.emit({ type: "text-start", id: textId })
                    }
                    text += event.text
                    yield* writer.emit({ type: "text-delta", id: textId, delta: event.text })
                    return
                  }
                  case "ToolCall":
                    calls.push({ id: event.id, name: event.name, input: event.input })
                    return
                  case "Finish":
                    tokens = { inputTokens: event.inputTokens, outputTokens: event.outputTokens }
                    return
                }
              })
            )
          )
          if (reasoningId !== undefined) yield* writer.emit({ type: "reasoning-end", id: reasoningId })
          if (textId !== undefined) yield* writer.emit({ type: "text-end", id: textId })
          return { text, calls, tokens }
        })

      const execute = (runId: string, cancelRequested: Effect.Effect<boolean>): Effect.Effect<void> =>
        Effect.scoped(
          Effect.gen(function*() {
            const found = yield* repo.find(runId)
            if (Option.isNone(found) || isTerminal(found.value.run.status)) return
            const row = found.value
            const plan = row.plan
            if (plan === undefined) {
              return yield* Effect.logError("run plan cannot be read; left to the recovery pass").pipe(
                Effect.annotateLogs({ run_id: runId })
              )
            }
            const writer = yield* events.writer(runId)
            const principal: Principal = { keyId: "", organizationId: row.organizationId, workspaceId: row.workspaceId }
            let usage = row.run.usage ?? ZeroUsage
            // Heartbeat: the recovery pass leaves a run alone while it is executing somewhere.
            const beat = Duration.millis(Math.max(1000, Math.floor(config.runStallMs / 4)))
            yield* Effect.forkScoped(
              Effect.repeat(Effect.flatMap(nowIso, (now) => repo.touch(runId, now)), Schedule.spaced(beat)).pipe(Effect.delay(beat))
            )

            const body = Effect.gen(function*() {
              if (writer.startSeq === 0) yield* writer.emit({ type: "start", messageId: runId })
              else if (row.park === null) {
                const logged = yield* events.read(runId, 0)
                // A step that was streaming when the previous executor died is replayed from scratch.
                const opened = logged.filter((e) => e.chunk.type === "start-step").length
                const closed = logged.filter((e) => e.chunk.type === "finish-step").length
                if (opened > closed) yield* writer.emit({ type: "reset-step" })
              }
              const startedAt = row.run.startedAt ?? (yield* nowIso)

              // A parked step resumes only once every interaction it waits on is settled.
              const parkedOn = row.park === null ? [] : yield* Effect.map(interactions.ofRun(runId), (all) => {
                const byId = new Map(all.map((i) => [i.id, i.interaction]))
                return (row.park?.pending ?? []).map((p) => ({ p, interaction: byId.get(p.interactionId) }))
              })
              if (parkedOn.some((w) => w.interaction === undefined || w.interaction.status === "pending")) {
                return { _tag: "StillParked" } satisfies Outcome
              }
              yield* repo.setStatus(runId, { status: "running", startedAt }, yield* nowIso)

              const model = models.provider(plan.route)
              const price = models.price(plan.route)
              if (model === undefined) {
                return {
                  _tag: "Failed",
                  terminalReason: null,
                  error: { type: "api_error", code: "upstream_unavailable", message: `Model route '${plan.route}' is not available.` }
                } satisfies Outcome
              }
              if (price === undefined && plan.budgetCents !== null) {
                return {
                  _tag: "Failed",
                  terminalReason: "pricing_unavailable",
                  error: { type: "api_error", code: "pricing_unavailable", message: `No price is configured for route '${plan.route}'.` }
                } satisfies Outcome
              }
              const effectivePrice = price ?? { inputCentsPer1k: 0, outputCentsPer1k: 0 }

              const toolset = yield* McpTools.connectAll({
                principal,
                runId,
                rootRunId: runId,
                servers: plan.toolServers,
                sessions,
                relist: row.park !== null,
                reveal: secrets.reveal
              })
              for (const problem of toolset.problems) yield* writer.emit({ type: "error", errorText: problem })
              const http = yield* HttpTools.connectAll({
                principal,
                runId,
                connections: plan.httpConnections,
                fetch: outbound.fetch,
                cache: specs,
                allowPrivate: outbound.allowPrivate,
                reveal: secrets.reveal
              })
              for (const { connectionId, name, errorCode, message } of http.unavailable) {
                yield* writer.emit({ type: "data-svc-http-connection-unavailable", data: { connectionId, name, errorCode, message } })
              }
              /**
               * Deferred loading (spec 4.6 rule 3): a deferred tool is offered with its name and
               * description only until the model loads its schema with load_tools in this run.
               */
              const deferred = new Set([...toolset.deferred, ...http.deferred])
              const loadedSchemas = new Set<string>()
              const externalSpecs = [...toolset.specs, ...http.specs]
              const toolsNow = (): ReadonlyArray<ToolSpec> => [
                ...externalSpecs.map((spec) => (deferred.has(spec.name) && !loadedSchemas.has(spec.name) ? { ...spec, inputSchema: DeferredSchema } : spec)),
                ...(deferred.size > 0 ? [loadToolsSpec] : []),
                ...(plan.skills.length > 0 ? [loadSkillSpec] : []),
                ...(plan.userInteraction ? [askQuestionSpec] : [])
              ]
              const system = systemPrompt(plan, yield* Clock.currentTimeMillis, row.run.config.timeZone, toolset.untrusted || http.untrusted, deferred.size > 0)
              const hookId = plan.approvals?.toolExecution?.hookId
              const hook = hookId === undefined ? undefined : yield* hooks.forRun(principal, hookId)
              const autoAllow = new Set(plan.approvals?.autoAllow ?? [])

              /**
               * streamProgress: one `data-svc-progress` part with a stable id, replaced in place; the
               * first answer text, a new step or the terminal chunks supersede it (spec 6.2).
               */
              const progress = (text: string) =>
                plan.streamProgress
                  ? writer.emit({ type: "data-svc-progress", id: `progress_${runId}`, data: { kind: "activity", summaryAvailable: false, text } })
                  : Effect.void

              /**
               * requiredSkills: the tool runs once the model loaded one of the named skills with
               * load_skill in this run: in an earlier step or in the same one (`stepCalls`). Earlier
               * turns reach the model as text only, so a new run loads the skill again.
               */
              const skillProblem = (call: ToolCall, stepCalls: ReadonlyArray<ToolCall>) =>
                Effect.gen(function*() {
                  const required = [...toolset.requiredSkillsOf(call.name), ...http.requiredSkillsOf(call.name)]
                  if (required.length === 0) return undefined
                  const available = required.filter((name) => plan.skills.some((s) => s.name === name))
                  if (available.length === 0) {
                    return `Error: '${call.name}' requires the skill ${required.map((n) => `'${n}'`).join(" or ")}, which this agent does not have; the tool cannot be called.`
                  }
                  const earlier = (yield* repo.checkpoints(runId)).flatMap((c) => c.messages).flatMap((m) => (m.role === "assistant" ? m.toolCalls : []))
                  const loaded = [...earlier, ...stepCalls].some((c) => c.name === "load_skill" && available.includes(skillNameOf(c.input)))
                  return loaded
                    ? undefined
                    : `Error: '${call.name}' can only be used after loading the skill ${available.map((n) => `'${n}'`).join(" or ")} with load_skill.`
                })

              /** `resumed`: the call was made before the run parked and runs now that it was approved. */
              const callTool = (call: ToolCall, stepCalls: ReadonlyArray<ToolCall>, resumed = false) =>
                Effect.gen(function*() {
                  if (call.name === "load_tools" && deferred.size > 0) {
                    const names = namesOf(call.input)
                    const found = externalSpecs.filter((spec) => names.includes(spec.name))
                    for (const spec of found) loadedSchemas.add(spec.name)
                    const unknown = names.filter((n) => !found.some((spec) => spec.name === n))
                    return {
                      output: { loaded: found.map((spec) => spec.name), unknown },
                      text: JSON.stringify({ tools: found, ...(unknown.length > 0 ? { unknown } : {}) }),
                      isError: false
                    }
                  }
                  if (call.name === "load_skill" && plan.skills.length > 0) {
                    const name = skillNameOf(call.input)
                    const skill = plan.skills.find((s) => s.name === name)
                    return skill === undefined
                      ? { output: { error: `no skill named '${name}'` }, text: `Error: no skill named '${name}'.`, isError: true }
                      : { output: { name: skill.name, loaded: true }, text: skill.body, isError: false }
                  }
                  const external = toolset.call(call.name, call.input) ?? http.call(call.name, call.input)
                  if (external !== undefined) {
                    const problem = yield* skillProblem(call, stepCalls)
                    if (problem !== undefined) return { output: { error: problem }, text: problem, isError: true }
                    const outcome = yield* external
                    if (outcome.overflow !== undefined) {
                      yield* writer.emit({
                        type: "data-svc-tool-result-overflow",
                        data: { toolCallId: call.id, toolName: call.name, ...outcome.overflow, recovery: "none" }
                      })
                    }
                    return outcome
                  }
                  if (resumed) {
                    // The call was decided before the park; the tool is gone from what the run reconnected to.
                    const text =
                      `tools_changed: '${call.name}' is no longer among this agent's tools (its server or HTTP document changed while the run waited); start a new run.`
                    return { output: { error: { code: "tools_changed", message: text } }, text, isError: true }
                  }
                  return { output: { error: `unknown tool '${call.name}'` }, text: `Error: there is no tool named '${call.name}'.`, isError: true }
                })

              /**
               * Whether a call runs now, waits for a person, or is refused (spec 2.1.5, 4.6 rule 4, 6.1):
               * autoAllow, then the connection's approval policy, then the agent's hook for calls the
               * policy did not waive; without a hook a call the policy gates waits for a person.
               */
              const gate = (call: ToolCall, stepNumber: number): Effect.Effect<Gate> =>
                Effect.gen(function*() {
                  if (call.name === "ask_question" && plan.userInteraction) {
                    const input = decodeAskQuestion(call.input)
                    return Option.isSome(input)
                      ? { _tag: "Question", request: toRequest(input.value) } satisfies Gate
                      : {
                        _tag: "Invalid",
                        outcome: {
                          output: { error: "invalid ask_question input" },
                          text: "Error: ask_question needs { title, details?, questions?: [{ id, prompt, options?, multiple?, multiline?, allowOther? }], actions? }.",
                          isError: true
                        }
                      } satisfies Gate
                  }
                  if (autoAllow.has(call.name)) return { _tag: "Run" } satisfies Gate
                  const policy = toolset.policyOf(call.name) ?? http.policyOf(call.name)
                  const gated = policy !== undefined && policy.approval !== null && policy.approval !== "never" &&
                    (policy.gatedTools === null || policy.gatedTools.includes(policy.originalName))
                  const waived = policy !== undefined && policy.approval !== null && !gated
                  if (waived) return { _tag: "Run" } satisfies Gate
                  const remember = gated && policy?.approval === "once"
                  if (remember && (yield* memory.has(row.run.threadId, call.name, call.input))) return { _tag: "Run" } satisfies Gate
                  if (hook === undefined) {
                    return gated ? { _tag: "Approval", hookId: null, reason: null, remember } satisfies Gate : { _tag: "Run" } satisfies Gate
                  }
                  const interactionId = newIdSync("interaction")
                  const answer = yield* hooks.review(hook, {
                    type: "tool_execution_review",
                    id: interactionId,
                    runId,
                    rootRunId: runId,
                    threadId: row.run.threadId,
                    agentId: row.run.agentId,
                    stepNumber: stepNumber + 1,
                    toolName: call.name,
                    toolCallId: call.id,
                    input: call.input,
                    preview: previewOf(call),
                    resolveUrl: `${config.publicUrl}/v1/interactions/${interactionId}/resolve`
                  }).pipe(Effect.result)
                  if (answer._tag === "Failure") {
                    const failure = answer.failure.message
                    yield* writer.emit({ type: "error", errorText: `Approval hook failed: ${failure}` })
                    switch (hook.config.onHookError) {
                      case "pause":
                        return { _tag: "Approval", hookId: hook.id, reason: null, remember, interactionId } satisfies Gate
                      case "fail-run":
                        return { _tag: "FailRun", message: `The approval hook failed: ${failure}` } satisfies Gate
                      default:
                        return { _tag: "Denied", reason: "The approval hook could not be reached, so the call was denied." } satisfies Gate
                    }
                  }
                  const { decision } = answer.success
                  if (decision.decision === "allow") {
                    if (remember) yield* memory.remember(row.run.threadId, call.name, call.input, yield* nowIso)
                    return { _tag: "Run" } satisfies Gate
                  }
                  if (decision.decision === "deny") return { _tag: "Denied", reason: decision.reason ?? null } satisfies Gate
                  return { _tag: "Approval", hookId: hook.id, reason: decision.reason ?? null, remember, interactionId } satisfies Gate
                })

              /** Opens the interaction a parked call waits on; returns what the park stores and announces. */
              const openInteraction = (stepNumber: number, call: ToolCall, waits: Extract<Gate, { _tag: "Question" | "Approval" }>) =>
                Effect.gen(function*() {
                  const now = yield* nowIso
                  const deadline = toIso((yield* Clock.currentTimeMillis) + parkWindowMs(config.maxParkMs, plan.maxDurationMs))
                  const id = waits._tag === "Approval" && waits.interactionId !== undefined ? waits.interactionId : newIdSync("interaction")
                  const approval = waits._tag === "Approval"
                  yield* interactions.insert({
                    id,
                    createdAt: now,
                    organizationId: row.organizationId,
                    workspaceId: row.workspaceId,
                    deadline,
                    interaction: {
                      id,
                      object: "interaction",
                      runId,
                      rootRunId: runId,
                      workerRef: null,
                      threadId: row.run.threadId,
                      agentId: row.run.agentId,
                      kind: approval ? "approval_request" : "question",
                      status: "pending",
                      stepNumber: stepNumber + 1,
                      toolName: call.name,
                      toolCallId: call.id,
                      hookId: approval ? waits.hookId : null,
                      input: call.input,
                      ...(approval ? { preview: previewOf(call) } : {}),
                      decision: null,
                      reason: approval ? waits.reason : null,
                      request: approval ? null : waits.request,
                      resolution: null,
                      expiresAt: deadline,
                      createdAt: now,
                      resolvedAt: null,
                      updatedAt: now
                    }
                  })
                  const request = approval
                    ? {
                      kind: "approval_request",
                      toolName: call.name,
                      input: call.input,
                      preview: previewOf(call),
                      options: ["approve", "deny"],
                      ...(waits.reason === null ? {} : { reason: waits.reason })
                    }
                    : { kind: "question", ...waits.request }
                  return {
                    deadline,
                    pending: {
                      toolCallId: call.id,
                      interactionId: id,
                      kind: approval ? "approval_request" as const : "question" as const,
                      remember: approval && waits.remember
                    },
                    chunk: { type: "data-svc-input-requested", data: { interactionId: id, toolCallId: call.id, request, expiresAt: deadline } }
                  }
                })

              // Resuming a parked step: settle each call from its interaction, then checkpoint the step.
              if (row.park !== null) {
                const park = row.park
                const calls = park.assistant.toolCalls
                yield* writer.emit({ type: "start", messageId: runId })
                yield* writer.emit({ type: "start-step" })
                const answered: Array<Settled> = []
                for (const { p, interaction } of parkedOn) {
                  const call = calls.find((c) => c.id === p.toolCallId)
                  if (call === undefined || interaction === undefined) continue
                  yield* writer.emit({ type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.input })
                  if (interaction.kind === "question") {
                    answered.push(settle(call, { output: interaction.resolution ?? { dismissed: true }, text: answerText(interaction), isError: false }))
                  } else if (interaction.decision === "allow") {
                    if (p.remember) yield* memory.remember(row.run.threadId, call.name, call.input, yield* nowIso)
                    answered.push(settle(call, yield* callTool(call, calls, true)))
                  } else {
                    answered.push(denied(call, interaction.reason))
                  }
                }
                const earlier: Array<Settled> = park.settled.map((m) => ({ message: m, chunk: { type: "noop" } }))
                const results = inCallOrder(calls, [...earlier, ...answered])
                usage = park.usage
                yield* repo.saveCheckpoint(runId, park.step, [...park.pendingUser, park.assistant, ...results.map((r) => r.message)], usage, yield* nowIso)
                for (const a of inCallOrder(calls, answered)) yield* writer.emit(a.chunk)
                yield* writer.emit({ type: "finish-step" })
                yield* repo.unpark(runId, yield* nowIso)
              }

              const checkpoints = yield* repo.checkpoints(runId)
              const history = yield* repo.history(row.run.threadId, row.run.createdAt)
              const messages: Array<Message> = [...history, { role: "user", content: plan.input }, ...checkpoints.flatMap((c) => c.messages)]
              let step = checkpoints.length
              // Schemas loaded in earlier steps of this run stay loaded.
              for (const c of messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls : []))) {
                if (c.name === "load_tools") for (const n of namesOf(c.input)) loadedSchemas.add(n)
              }

              /** The step's messages are checkpointed before its results are announced. */
              const completeStep = (stepNumber: number, users: ReadonlyArray<Message>, assistant: AssistantMessage, results: ReadonlyArray<Settled>) =>
                Effect.gen(function*() {
                  yield* repo.saveCheckpoint(runId, stepNumber, [...users, assistant, ...results.map((r) => r.message)], usage, yield* nowIso)
                  for (const r of results) yield* writer.emit(r.chunk)
                  yield* writer.emit({ type: "finish-step" })
                  messages.push(assistant, ...results.map((r) => r.message))
                })

              // Follow-ups claimed since the last checkpoint: they open the next checkpointed step.
              let pendingUser: Array<Message> = []
              const deliverFollowups = Effect.gen(function*() {
                const claimed = yield* followups.claim(runId, yield* nowIso)
                for (const f of claimed) {
                  yield* writer.emit({ type: "data-svc-followup-replayed", data: { followupId: f.id, text: f.text } })
                  const message: Message = { role: "user", content: f.text }
                  messages.push(message)
                  pendingUser.push(message)
                }
                return claimed.length
              })

              while (true) {
                yield* deliverFollowups
                if (step >= plan.maxSteps) return { _tag: "Completed", terminalReason: "max_steps_exceeded", output: undefined } satisfies Outcome
                if (plan.budgetCents !== null && usage.costCents >= plan.budgetCents) {
                  return { _tag: "Completed", terminalReason: "budget_exceeded", output: undefined } satisfies Outcome
                }
                yield* writer.emit({ type: "start-step" })
                yield* progress("Thinking")
                const result = yield* modelStep(model, plan, writer, system, messages, toolsNow())
                usage = addUsage(usage, result.tokens, effectivePrice)
                const assistant: AssistantMessage = { role: "assistant", content: result.text, toolCalls: result.calls }
                for (const call of result.calls) {
                  yield* writer.emit({ type: "tool-input-start", toolCallId: call.id, toolName: call.name })
                  yield* writer.emit({ type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.input })
                }
                if (result.calls.length > 0) {
                  yield* progress(`Working: ${result.calls.map((c) => c.name).join(", ")}`)
                  // A tool call is stored before it fires, so a resumed run knows the step was under way.
                  yield* writer.flush
                }
                // Each call is gated first (hooks answer one at a time); the ones allowed then run
                // concurrently, each a child fiber of the run; the ones waiting for a person park the step.
                const gates: Array<{ readonly call: ToolCall; readonly gate: Gate }> = []
                for (const call of result.calls) gates.push({ call, gate: yield* gate(call, step) })
                const failRun = gates.find((g) => g.gate._tag === "FailRun")
                if (failRun !== undefined && failRun.gate._tag === "FailRun") {
                  return {
                    _tag: "Failed",
                    terminalReason: null,
                    error: { type: "api_error", code: "approval_hook_failed", message: failRun.gate.message }
                  } satisfies Outcome
                }
                const runnable = gates.flatMap((g) => (g.gate._tag === "Run" ? [g.call] : []))
                const ran = yield* Effect.forEach(runnable, (call) => Effect.map(callTool(call, result.calls), (outcome) => settle(call, outcome)), {
                  concurrency: "unbounded"
                })
                const settled: Array<Settled> = [
                  ...ran,
                  ...gates.flatMap((g) => (g.gate._tag === "Invalid" ? [settle(g.call, g.gate.outcome)] : [])),
                  ...gates.flatMap((g) => (g.gate._tag === "Denied" ? [denied(g.call, g.gate.reason)] : []))
                ]
                const waits = gates.flatMap((g) => (g.gate._tag === "Question" || g.gate._tag === "Approval" ? [{ call: g.call, gate: g.gate }] : []))
                if (waits.length > 0) {
                  const opened = yield* Effect.forEach(waits, ({ call, gate: w }) => openInteraction(step, call, w))
                  const record: ParkRecord = {
                    step,
                    pendingUser,
                    assistant,
                    settled: inCallOrder(result.calls, settled).map((s) => s.message),
                    pending: opened.map((o) => o.pending),
                    usage
                  }
                  const status = opened.some((o) => o.pending.kind === "approval_request") ? "waiting_for_approval" : "waiting_for_input"
                  // The step is stored before its settled results and the requests are announced.
                  yield* repo.park(runId, record, status, opened[0].deadline, yield* nowIso)
                  for (const s of inCallOrder(result.calls, settled)) yield* writer.emit(s.chunk)
                  for (const o of opened) yield* writer.emit(o.chunk)
                  return { _tag: "Parked" } satisfies Outcome
                }
                yield* completeStep(step, pendingUser, assistant, inCallOrder(result.calls, settled))
                pendingUser = []
                step += 1
                if (result.calls.length === 0) {
                  // A message held while the model answered opens one more step of this turn.
                  if ((yield* deliverFollowups) > 0) continue
                  if (plan.outputSchema === null) return { _tag: "Completed", terminalReason: null, output: undefined } satisfies Outcome
                  const extracted = StructuredOutput.extract(result.text, plan.outputSchema)
                  if (extracted._tag === "Invalid") yield* writer.emit({ type: "error", errorText: `No structured output: ${extracted.message}.` })
                  return {
                    _tag: "Completed",
                    terminalReason: null,
                    output: extracted._tag === "Value" ? extracted.value : undefined
                  } satisfies Outcome
                }
              }
            })

            const deadline = plan.maxDurationMs === null
              ? undefined
              : Date.parse(row.run.startedAt ?? row.run.createdAt) + plan.maxDurationMs
            const remaining = deadline === undefined ? undefined : Math.max(0, deadline - (yield* Clock.currentTimeMillis))
            const bounded: Effect.Effect<Outcome, never, Scope.Scope> = (remaining === undefined ? body : body.pipe(
              Effect.timeoutOrElse({
                duration: Duration.millis(remaining),
                orElse: () => Effect.succeed({ _tag: "Completed", terminalReason: "max_duration_exceeded", output: undefined } satisfies Outcome)
              })
            )).pipe(
              Effect.catchTag("ModelUnavailable", (e) =>
                Effect.succeed({
                  _tag: "Failed",
                  terminalReason: null,
                  error: { type: "api_error", code: "upstream_unavailable", message: `The model provider is unavailable: ${e.message}` }
                } satisfies Outcome)),
              Effect.catchDefect((defect) => {
                const reference = newIdSync("incident")
                return Effect.as(
                  Effect.logError("run engine fault", defect).pipe(Effect.annotateLogs({ reference, run_id: runId })),
                  {
                    _tag: "Failed",
                    terminalReason: "engine_fault",
                    error: { type: "api_error", code: "internal_error", message: "The run failed because of an internal error.", reference }
                  } satisfies Outcome
                )
              })
            )
            const outcome = yield* bounded.pipe(
              Effect.onInterrupt(() =>
                Effect.flatMap(cancelRequested, (cancelled) => (cancelled ? finalizeCancelled(row, writer) : Effect.void))
              )
            )
            yield* finalize(row, writer, outcome, usage)
          })
        )

      const cancelIdle = (runId: string) =>
        Effect.scoped(
          Effect.gen(function*() {
            const found = yield* repo.find(runId)
            if (Option.isNone(found) || isTerminal(found.value.run.status)) return
            const writer = yield* events.writer(runId)
            if (writer.startSeq === 0) yield* writer.emit({ type: "start", messageId: runId })
            yield* finalizeCancelled(found.value, writer)
          })
        )

      const reap = (runId: string) =>
        Effect.scoped(
          Effect.gen(function*() {
            const reference = newIdSync("incident")
            const error: RunError = {
              type: "api_error",
              code: "internal_error",
              message: "The run could not be resumed and was finalized by the recovery pass.",
              reference
            }
            yield* Effect.logError("run reaped by the recovery pass").pipe(Effect.annotateLogs({ reference, run_id: runId }))
            const writer = yield* events.writer(runId)
            if (writer.startSeq === 0) yield* writer.emit({ type: "start", messageId: runId })
            yield* writer.emit({ type: "error", errorText: error.message })
            yield* writer.emit({ type: "data-svc-terminal", data: { terminalReason: "run_recovery_reaped" } })
            yield* writer.emit({ type: "finish", finishReason: "error" })
            yield* writer.commit(Effect.flatMap(nowIso, (now) => repo.reap(runId, error, now)))
          })
        )

      const expire = (runId: string) =>
        Effect.scoped(
          Effect.gen(function*() {
            const found = yield* repo.find(runId)
            if (Option.isNone(found)) return
            const row = found.value
            if (row.run.status !== "waiting_for_approval" && row.run.status !== "waiting_for_input") return
            const writer = yield* events.writer(runId)
            yield* writer.emit({ type: "data-svc-terminal", data: { terminalReason: "interaction_timeout" } })
            yield* writer.emit({ type: "data-svc-usage", data: row.run.usage ?? ZeroUsage })
            yield* writer.emit({ type: "abort", reason: "interaction_timeout" })
            const now = yield* nowIso
            yield* writer.commit(
              Effect.all([
                repo.setStatus(runId, { status: "cancelled", terminalReason: "interaction_timeout", completedAt: now }, now),
                repo.releaseThread(row.run.threadId, runId, now),
                interactions.cancelPending(runId, now),
                repo.clearPark(runId, now)
              ], { discard: true })
            )
          })
        )

      return { execute, cancelIdle, reap, expire }
    })
  )
}


/**
 * The tools of one run: every family (MCP, HTTP, and later workspace, code
 * host, subagents) merged with the built-ins. The loop asks it what to offer
 * the model and to run a call; it never needs to know which family a tool
 * comes from. Deferred schemas (load_tools) and requiredSkills (load_skill in
 * this run) are applied here, the same way for every family, and so is the
 * recovery of over-cap results: kept by a family that can (ResultSpill), else
 * archived through the agent's result handler (ResultArchive).
 */
import { Effect } from "effect"
import type { AgentSkill } from "../../domain/Agent.ts"
import type { ToolCall, ToolSpec } from "../../domain/Conversation.ts"
import * as Builtin from "./BuiltinTools.ts"
import { delegateTaskSpec } from "./DelegateTask.ts"
import * as ResultArchive from "./ResultArchive.ts"
import * as ResultSpill from "./ResultSpill.ts"
import type { Archive, ToolFamily, ToolOutcome, ToolPolicyRef } from "./ToolFamily.ts"

export interface CallContext {
  /** This run's calls so far: checkpointed steps and the current step (earlier runs do not count). */
  readonly runCalls: ReadonlyArray<ToolCall>
  /** The call was made before the run parked and runs now that it was approved. */
  readonly resumed: boolean
  /** The step the call belongs to (0-based). */
  readonly step: number
}

export interface Toolset {
  /** What the model is offered now: deferred tools without their schema until loaded, then the built-ins. */
  readonly specs: () => ReadonlyArray<ToolSpec>
  /** Whether some tool's results reach the model in the untrusted envelope. */
  readonly untrusted: boolean
  readonly hasDeferred: boolean
  /** Instruction files the families load for the system prompt (the code host's AGENTS.md, ...). */
  readonly instructions: ReadonlyArray<string>
  readonly policyOf: (name: string) => ToolPolicyRef | undefined
  /** Whether `name` is the ask_question built-in of this run. */
  readonly isQuestion: (name: string) => boolean
  /** Whether `name` is the delegate_task built-in of this run (the loop runs it as a worker, not through `call`). */
  readonly isDelegation: (name: string) => boolean
  readonly call: (call: ToolCall, context: CallContext) => Effect.Effect<ToolOutcome>
  /** Schemas loaded by load_tools in earlier steps of the run stay loaded. */
  readonly restore: (calls: ReadonlyArray<ToolCall>) => void
}

export interface ToolsetOptions {
  readonly families: ReadonlyArray<ToolFamily>
  readonly skills: ReadonlyArray<AgentSkill>
  readonly userInteraction: boolean
  /** The agent's oversized-result handler; used only when no family can `spill`. */
  readonly archive?: Archive
  /** capabilities.subagents: delegate_task is offered. */
  readonly subagents?: boolean
}

const fail = (text: string, output: unknown = { error: text }): ToolOutcome => ({ output, text, isError: true })

export const make = (options: ToolsetOptions): Toolset => {
  const { families, skills } = options
  const external = families.flatMap((f) => f.specs)
  const deferred = new Set(families.flatMap((f) => [...f.deferred]))
  const loaded = new Set<string>()
  const first = <A>(f: (family: ToolFamily) => A | undefined): A | undefined => {
    for (const family of families) {
      const found = f(family)
      if (found !== undefined) return found
    }
    return undefined
  }

  /** Where an over-cap result of any family is kept whole: the first family that offers it (the workspace). */
  const spill = first((f) => f.spill)

  const loadTools = (input: unknown): ToolOutcome => {
    const names = Builtin.namesOf(input)
    const found = external.filter((spec) => names.includes(spec.name))
    for (const spec of found) loaded.add(spec.name)
    const unknown = names.filter((n) => !found.some((spec) => spec.name === n))
    return {
      output: { loaded: found.map((spec) => spec.name), unknown },
      text: JSON.stringify({ tools: found, ...(unknown.length > 0 ? { unknown } : {}) }),
      isError: false
    }
  }

  const loadSkill = (input: unknown): ToolOutcome => {
    const name = Builtin.skillNameOf(input)
    const skill = skills.find((s) => s.name === name)
    return skill === undefined
      ? fail(`Error: no skill named '${name}'.`, { error: `no skill named '${name}'` })
      : { output: { name: skill.name, loaded: true }, text: skill.body, isError: false }
  }

  /** requiredSkills: the tool runs once the model loaded one of the named skills with load_skill in this run. */
  const skillProblem = (call: ToolCall, runCalls: ReadonlyArray<ToolCall>): string | undefined => {
    const required = families.flatMap((f) => f.requiredSkillsOf(call.name))
    if (required.length === 0) return undefined
    const available = required.filter((name) => skills.some((s) => s.name === name))
    if (available.length === 0) {
      return `Error: '${call.name}' requires the skill ${
        required.map((n) => `'${n}'`).join(" or ")
      }, which this agent does not have; the tool cannot be called.`
    }
    const isLoaded = runCalls.some((c) => c.name === "load_skill" && available.includes(Builtin.skillNameOf(c.input)))
    return isLoaded
      ? undefined
      : `Error: '${call.name}' can only be used after loading the skill ${
        available.map((n) => `'${n}'`).join(" or ")
      } with load_skill.`
  }

  const call = (call: ToolCall, context: CallContext): Effect.Effect<ToolOutcome> => {
    if (call.name === "load_tools" && deferred.size > 0) return Effect.succeed(loadTools(call.input))
    if (call.name === "load_skill" && skills.length > 0) return Effect.succeed(loadSkill(call.input))
    const run = first((f) => f.call(call.name, call.input, { id: call.id, step: context.step }))
    if (run !== undefined) {
      const problem = skillProblem(call, context.runCalls)
      if (problem !== undefined) return Effect.succeed(fail(problem))
      // Precedence of over-cap recovery: the workspace, else the agent's result handler, else none.
      if (spill !== undefined) return Effect.flatMap(run, (outcome) => ResultSpill.recover(outcome, call.id, spill))
      const archive = options.archive
      return archive === undefined
        ? run
        : Effect.flatMap(run, (outcome) => ResultArchive.recover(outcome, call, context.step, archive))
    }
    if (context.resumed) {
      // The call was decided before the park; the tool is gone from what the run reconnected to.
      const text =
        `tools_changed: '${call.name}' is no longer among this agent's tools (its server or HTTP document changed while the run waited); start a new run.`
      return Effect.succeed(fail(text, { error: { code: "tools_changed", message: text } }))
    }
    return Effect.succeed(
      fail(`Error: there is no tool named '${call.name}'.`, { error: `unknown tool '${call.name}'` })
    )
  }

  return {
    specs: () => [
      ...external.map((
        spec
      ) => (deferred.has(spec.name) && !loaded.has(spec.name)
        ? { ...spec, inputSchema: Builtin.DeferredSchema }
        : spec)
      ),
      ...(deferred.size > 0 ? [Builtin.loadToolsSpec] : []),
      ...(skills.length > 0 ? [Builtin.loadSkillSpec] : []),
      ...(options.userInteraction ? [Builtin.askQuestionSpec] : []),
      ...(options.subagents === true ? [delegateTaskSpec] : [])
    ],
    untrusted: families.some((f) => f.untrusted),
    hasDeferred: deferred.size > 0,
    instructions: families.flatMap((f) => f.instructions ?? []),
    policyOf: (name) => first((f) => f.policyOf(name)),
    isQuestion: (name) => name === "ask_question" && options.userInteraction,
    isDelegation: (name) => name === delegateTaskSpec.name && options.subagents === true,
    call,
    restore: (calls) => {
      for (const c of calls) if (c.name === "load_tools") { for (const n of Builtin.namesOf(c.input)) loaded.add(n) }
    }
  }
}

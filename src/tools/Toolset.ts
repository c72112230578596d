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
import { delegateTask } from "./DelegateTask.ts"
import * as ResultArchive from "./ResultArchive.ts"
import * as ResultSpill from "./ResultSpill.ts"
import * as ToolDef from "./ToolDef.ts"
import type { Archive, ToolFamily, ToolPolicyRef } from "./ToolFamily.ts"
import * as ToolOutcome from "./ToolOutcome.ts"

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
  readonly call: (call: ToolCall, context: CallContext) => Effect.Effect<ToolOutcome.ToolOutcome>
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

  const builtins = ToolDef.family([
    ...(deferred.size > 0 ? [Builtin.loadTools] : []),
    ...(skills.length > 0 ? [Builtin.loadSkill] : [])
  ], { context: () => ({ external, loaded, skills }) })

  /** requiredSkills: the tool runs once the model loaded one of the named skills with load_skill in this run. */
  const skillProblem = (call: ToolCall, runCalls: ReadonlyArray<ToolCall>): string | undefined => {
    const required = families.flatMap((f) => f.requiredSkillsOf(call.name))
    if (required.length === 0) return undefined
    const available = required.filter((name) => skills.some((s) => s.name === name))
    if (available.length === 0) {
      return `'${call.name}' requires the skill ${
        required.map((n) => `'${n}'`).join(" or ")
      }, which this agent does not have; the tool cannot be called.`
    }
    const isLoaded = runCalls.some((c) => {
      const name = c.name === "load_skill" ? Builtin.skillNameOf(c.input) : undefined
      return name !== undefined && available.includes(name)
    })
    return isLoaded
      ? undefined
      : `'${call.name}' can only be used after loading the skill ${
        available.map((n) => `'${n}'`).join(" or ")
      } with load_skill.`
  }

  const call = (call: ToolCall, context: CallContext): Effect.Effect<ToolOutcome.ToolOutcome> => {
    const ref = { id: call.id, step: context.step }
    const builtin = builtins.call(call.name, call.input, ref)
    if (builtin !== undefined) return builtin
    const run = first((f) => f.call(call.name, call.input, ref))
    if (run !== undefined) {
      const problem = skillProblem(call, context.runCalls)
      if (problem !== undefined) return Effect.succeed(ToolOutcome.failure("skill_required", problem))
      // Precedence of over-cap recovery: the workspace, else the agent's result handler, else none.
      if (spill !== undefined) return Effect.flatMap(run, (outcome) => ResultSpill.recover(outcome, call.id, spill))
      const archive = options.archive
      return archive === undefined
        ? run
        : Effect.flatMap(run, (outcome) => ResultArchive.recover(outcome, call, context.step, archive))
    }
    if (context.resumed) {
      // The call was decided before the park; the tool is gone from what the run reconnected to.
      return Effect.succeed(ToolOutcome.failure(
        "tools_changed",
        `'${call.name}' is no longer among this agent's tools (its server or HTTP document changed while the run waited); start a new run.`
      ))
    }
    return Effect.succeed(ToolOutcome.failure("unknown_tool", `there is no tool named '${call.name}'.`))
  }

  return {
    specs: () => [
      ...external.map((
        spec
      ) => (deferred.has(spec.name) && !loaded.has(spec.name)
        ? { ...spec, inputSchema: Builtin.DeferredSchema }
        : spec)
      ),
      ...builtins.specs,
      ...(options.userInteraction ? [Builtin.askQuestion.spec] : []),
      ...(options.subagents === true ? [delegateTask.spec] : [])
    ],
    untrusted: families.some((f) => f.untrusted),
    hasDeferred: deferred.size > 0,
    instructions: families.flatMap((f) => f.instructions ?? []),
    policyOf: (name) => first((f) => f.policyOf(name)),
    isQuestion: (name) => name === Builtin.askQuestion.name && options.userInteraction,
    isDelegation: (name) => name === delegateTask.name && options.subagents === true,
    call,
    restore: (calls) => {
      for (const c of calls) if (c.name === "load_tools") { for (const n of Builtin.namesOf(c.input)) loaded.add(n) }
    }
  }
}

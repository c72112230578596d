/**
 * The system prompt of a run: its durable context blocks, the current time in
 * the run's zone, the skills it can load, the notices its tools need, and for
 * a worker run (subagents) what its task is.
 * Built once per execution, not per step.
 */
import type { RunPlan } from "../../domain/RunPlan.ts"
import * as ToolResults from "../tools/ToolResults.ts"

export interface PromptTools {
  /** Some tool's results come in the untrusted envelope. */
  readonly untrusted: boolean
  /** Some tools are offered without their schema (load_tools). */
  readonly deferred: boolean
  /** Instruction files of the code host's one granted repository (AGENTS.md, ...). */
  readonly instructions?: ReadonlyArray<string>
}

const formats = new Map<string, Intl.DateTimeFormat>()

/** Formatters are costly to build: one per zone. */
const formatIn = (timeZone: string): Intl.DateTimeFormat => {
  let format = formats.get(timeZone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-CA", { timeZone, dateStyle: "full", timeStyle: "long" })
    formats.set(timeZone, format)
  }
  return format
}

export const systemPrompt = (plan: RunPlan, nowMillis: number, timeZone: string, tools: PromptTools): string => {
  const parts = [...plan.context, `Current date and time: ${formatIn(timeZone).format(nowMillis)} (${timeZone}).`]
  if (plan.skills.length > 0) {
    parts.push(
      "Skills you can load with the load_skill tool:\n" +
        plan.skills.map((s) => `- ${s.name}: ${s.description}`).join("\n")
    )
  }
  if (tools.deferred) {
    parts.push(
      "Some tools are listed without their input schema. Call load_tools with their names to load the schemas before calling them."
    )
  }
  if (tools.untrusted) parts.push(ToolResults.untrustedNotice)
  parts.push(...(tools.instructions ?? []))
  if (plan.worker !== undefined) {
    parts.push(
      `You are carrying out a task ('${plan.worker.label}') delegated to you by another agent. ` +
        (plan.worker.role === "advisor" ? "You have no tools: answer from what you know. " : "") +
        "Your final answer is returned to that agent as the task's result: make it complete and self-contained."
    )
  }
  return parts.join("\n\n")
}

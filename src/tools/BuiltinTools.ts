/**
 * The built-in tools of a run: `load_tools` (deferred schemas, spec 4.6 rule
 * 3), `load_skill` (the agent's skills) and `ask_question` (user interaction;
 * the tool gate parks the run on it, the answer is its result).
 */
import { Effect, Result, Schema } from "effect"
import type { AgentSkill } from "../../domain/Agent.ts"
import type { ToolSpec } from "../../domain/Conversation.ts"
import { AskQuestionInput, type Interaction, type QuestionRequest } from "../../domain/Interaction.ts"
import * as ToolDef from "./ToolDef.ts"
import * as ToolOutcome from "./ToolOutcome.ts"

/** What load_tools and load_skill act on: the run's Toolset. */
export interface BuiltinCall {
  /** The families' tools, deferred ones among them. */
  readonly external: ReadonlyArray<ToolSpec>
  /** The deferred tools whose schema was loaded in this run. */
  readonly loaded: Set<string>
  readonly skills: ReadonlyArray<AgentSkill>
}

export const loadTools = ToolDef.make({
  name: "load_tools",
  description: "Load the full input schemas of tools listed without one, by name, before calling them.",
  input: Schema.Struct({ names: Schema.Array(Schema.String) }),
  handler: ({ names }, { external, loaded }: BuiltinCall) =>
    Effect.sync(() => {
      const found = external.filter((spec) => names.includes(spec.name))
      for (const spec of found) loaded.add(spec.name)
      const unknown = names.filter((n) => !found.some((spec) => spec.name === n))
      return ToolOutcome.success(
        { loaded: found.map((spec) => spec.name), unknown },
        JSON.stringify({ tools: found, ...(unknown.length > 0 ? { unknown } : {}) })
      )
    })
})

/**
 * What the model reads when it loads a skill: the body, under its frontmatter
 * as a SKILL.md file carries it (one `key: value` line per key in key order, values and
 * keys other than plain words in JSON, which YAML reads as flow values). `metadata` is the API user's and
 * never reaches the model.
 */
const yamlKey = (key: string): string => (/^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key))

export const skillText = (skill: AgentSkill): string => {
  const keys = Object.entries(skill.frontmatter ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return keys.length === 0
    ? skill.body
    : `---\n${keys.map(([key, value]) => `${yamlKey(key)}: ${JSON.stringify(value)}`).join("\n")}\n---\n\n${skill.body}`
}

export const loadSkill = ToolDef.make({
  name: "load_skill",
  description: "Load the full instructions of one of your skills by name.",
  input: Schema.Struct({ name: Schema.String }),
  handler: ({ name }, { skills }: BuiltinCall) => {
    const skill = skills.find((s) => s.name === name)
    return Effect.succeed(
      skill === undefined
        ? ToolOutcome.failure("unknown_skill", `no skill named '${name}'.`)
        : ToolOutcome.success({ name: skill.name, loaded: true }, skillText(skill))
    )
  }
})

/** Run by the tool gate, not a family: the run parks on it and the person's answer is its result. */
export const askQuestion = ToolDef.declare({
  name: "ask_question",
  description:
    "Ask the user one or more questions and wait for the answers. Use options for choices; multiple allows several; multiline or allowOther allow free text; actions are buttons that answer the whole request.",
  input: AskQuestionInput
})

/** What a deferred tool offers until its schema is loaded. */
export const DeferredSchema = { type: "object", additionalProperties: true }

/** The names an earlier load_tools call loaded (none when its input was invalid). */
export const namesOf = (input: unknown): ReadonlyArray<string> =>
  Result.getOrUndefined(ToolDef.decode(loadTools, input))?.names ?? []

/** The skill an earlier load_skill call asked for (none when its input was invalid). */
export const skillNameOf = (input: unknown): string | undefined =>
  Result.getOrUndefined(ToolDef.decode(loadSkill, input))?.name

/** The stored request of an ask_question call (question flags resolved to booleans), or the failure of a malformed input. */
export const questionRequest = (input: unknown): Result.Result<QuestionRequest, ToolOutcome.ToolOutcome> =>
  Result.map(ToolDef.decode(askQuestion, input), (q): QuestionRequest => ({
    title: q.title,
    ...(q.details === undefined ? {} : { details: q.details }),
    ...(q.questions === undefined ? {} : {
      questions: q.questions.map((item) => ({
        id: item.id,
        prompt: item.prompt,
        ...(item.options === undefined ? {} : { options: item.options }),
        multiple: item.multiple ?? false,
        multiline: item.multiline ?? false,
        allowOther: item.allowOther ?? false
      }))
    }),
    ...(q.actions === undefined ? {} : { actions: q.actions })
  }))

/** What a resumed step's question call returns to the model: the person's answers. */
export const answerText = (interaction: Interaction): string =>
  interaction.status === "cancelled"
    ? "The user dismissed the question without answering."
    : JSON.stringify({
      answers: interaction.resolution?.["inputResponses"] ?? [],
      ...(interaction.reason === null ? {} : { reason: interaction.reason })
    })

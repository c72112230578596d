/**
 * The built-in tools of a run: `load_tools` (deferred schemas, spec 4.6 rule
 * 3), `load_skill` (the agent's skills) and `ask_question` (user interaction;
 * the tool gate parks the run on it, the answer is its result).
 */
import { Option, Schema } from "effect"
import type { ToolSpec } from "../../domain/Conversation.ts"
import { AskQuestionInput, type Interaction, type QuestionRequest } from "../../domain/Interaction.ts"

export const loadToolsSpec: ToolSpec = {
  name: "load_tools",
  description: "Load the full input schemas of tools listed without one, by name, before calling them.",
  inputSchema: {
    type: "object",
    properties: { names: { type: "array", items: { type: "string" } } },
    required: ["names"]
  }
}

export const loadSkillSpec: ToolSpec = {
  name: "load_skill",
  description: "Load the full instructions of one of your skills by name.",
  inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
}

const choice = {
  type: "object",
  properties: { id: { type: "string" }, label: { type: "string" } },
  required: ["id", "label"]
}

export const askQuestionSpec: ToolSpec = {
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
            options: { type: "array", items: choice },
            multiple: { type: "boolean" },
            multiline: { type: "boolean" },
            allowOther: { type: "boolean" }
          },
          required: ["id", "prompt"]
        }
      },
      actions: { type: "array", items: choice }
    },
    required: ["title"]
  }
}

/** What a deferred tool offers until its schema is loaded. */
export const DeferredSchema = { type: "object", additionalProperties: true }

/** The names a load_tools call asks for. */
export const namesOf = (input: unknown): ReadonlyArray<string> =>
  typeof input === "object" && input !== null && "names" in input && Array.isArray(input.names)
    ? input.names.map(String)
    : []

/** The skill a load_skill call asks for. */
export const skillNameOf = (input: unknown): string =>
  typeof input === "object" && input !== null && "name" in input ? String(input.name) : ""

const decodeAskQuestion = Schema.decodeUnknownOption(AskQuestionInput)

/** The stored request of an ask_question call (question flags resolved to booleans); none when the input is malformed. */
export const questionRequest = (input: unknown): Option.Option<QuestionRequest> =>
  Option.map(decodeAskQuestion(input), (q): QuestionRequest => ({
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

export const invalidQuestionText =
  "Error: ask_question needs { title, details?, questions?: [{ id, prompt, options?, multiple?, multiline?, allowOther? }], actions? }."

/** What a resumed step's question call returns to the model: the person's answers. */
export const answerText = (interaction: Interaction): string =>
  interaction.status === "cancelled"
    ? "The user dismissed the question without answering."
    : JSON.stringify({
      answers: interaction.resolution?.["inputResponses"] ?? [],
      ...(interaction.reason === null ? {} : { reason: interaction.reason })
    })

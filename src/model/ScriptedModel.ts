/**
 * `scripted`: a deterministic built-in model for development, tests and
 * benchmarks. It reads the turn's user message; lines starting with `/` are
 * directives, one step each, in order:
 *
 *   /tool <name> <json input>   call tool <name> (input defaults to {})
 *   /tools <json array>         call several tools in one step: [{ "name", "input" }, ...]
 *   /delegate <json>            delegate_task in one step: one task { label, prompt, role? } or an array of them
 *   /text <text>                answer with <text> (ends the turn)
 *   /show-tools                 answer with the tools offered in this step, as JSON [{ name, inputSchema }]
 *   /output <json>              answer with this JSON as the structured result
 *   /reason <text>              think <text> (reasoning) before the next answer
 *   /steps <n>                  take n steps: n-1 calls of the absent tool `noop`, then an answer
 *   /fail                       behave as an unavailable provider
 *
 * Without directives it answers `Echo: <message>`; the first answer of a
 * thread (no assistant message before it) opens with `introduction` and a
 * blank line. After tool steps with no final directive it answers
 * `Result: <last tool output>`, the output without its untrusted-data
 * envelope (the model's input keeps it). Text streams in word-sized deltas;
 * tokens are estimated at four characters each.
 */
import { Data, Option, Schema, Stream } from "effect"
import type { Message } from "../../domain/Conversation.ts"
import { unwrap } from "../tools/ToolResults.ts"
import { estimateTokens, ModelEvent, type ModelProvider, type ModelRequest, ModelUnavailable } from "./ModelProvider.ts"

/** What the scripted model says before its first echo in a thread. */
export const introduction = "This is the scripted development model, which only echoes: for a real model, set " +
  "SVC_BAND_CORE=openai:<model> or anthropic:<model> with its key (see docs/guide/models.md)."

type Action = Data.TaggedEnum<{
  Tool: { readonly calls: ReadonlyArray<{ readonly name: string; readonly input: unknown }> }
  Text: { readonly text: string }
  Output: { readonly json: string }
  Fail: {}
  ShowTools: {}
}>
const Action = Data.taggedEnum<Action>()

interface Script {
  readonly actions: ReadonlyArray<Action>
  readonly reasoning: string | undefined
}

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

/** A directive's JSON argument; text that is not JSON is passed on as `{ unparsed }`. */
const parseInput = (raw: string): unknown =>
  raw.trim() === "" ? {} : Option.getOrElse(decodeJson(raw), () => ({ unparsed: raw }))

/** The script of `message`; `first` when no answer precedes it in the thread (the echo then opens with `introduction`). */
export const parseScript = (message: string, first = false): Script => {
  const actions: Array<Action> = []
  let reasoning: string | undefined
  for (const line of message.split("\n")) {
    const match = /^\/([\w-]+)\s?(.*)$/.exec(line.trim())
    if (!match) continue
    const [, directive, rest] = match
    if (directive === "tool") {
      const [, name = "", input = ""] = /^(\S+)\s*(.*)$/.exec(rest) ?? []
      actions.push(Action.Tool({ calls: [{ name, input: parseInput(input) }] }))
    } else if (directive === "tools") {
      const list = parseInput(rest)
      const calls = Array.isArray(list)
        ? list.map((c: unknown) => {
          const call = typeof c === "object" && c !== null ? (c as Record<string, unknown>) : {}
          return { name: String(call["name"] ?? ""), input: call["input"] ?? {} }
        })
        : []
      actions.push(Action.Tool({ calls }))
    } else if (directive === "delegate") {
      const tasks = parseInput(rest)
      actions.push(Action.Tool({
        calls: (Array.isArray(tasks) ? tasks : [tasks]).map((input: unknown) => ({ name: "delegate_task", input }))
      }))
    } else if (directive === "text") actions.push(Action.Text({ text: rest }))
    else if (directive === "output") actions.push(Action.Output({ json: rest }))
    else if (directive === "reason") reasoning = rest
    else if (directive === "fail") actions.push(Action.Fail())
    else if (directive === "show-tools") actions.push(Action.ShowTools())
    else if (directive === "steps") {
      const n = Math.max(1, Math.min(1000, Number.parseInt(rest, 10) || 1))
      for (let i = 1; i < n; i++) actions.push(Action.Tool({ calls: [{ name: "noop", input: { step: i } }] }))
      actions.push(Action.Text({ text: `Finished after ${n} steps.` }))
    }
  }
  if (actions.length === 0) {
    actions.push(Action.Text({ text: `${first ? `${introduction}\n\n` : ""}Echo: ${message}` }))
  }
  return { actions, reasoning }
}

/** The turn's user message and how many steps the model already took in this turn. */
const turnState = (messages: ReadonlyArray<Message>) => {
  let lastUser = -1
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === "user") {
      lastUser = i
      break
    }
  }
  const user = lastUser >= 0 ? messages[lastUser] : undefined
  const after = messages.slice(lastUser + 1)
  const lastTool = [...after].reverse().find((m) => m.role === "tool")
  return {
    text: user?.role === "user" ? user.content : "",
    step: after.filter((m) => m.role === "assistant").length,
    lastToolOutput: lastTool?.role === "tool" ? unwrap(lastTool.content) : undefined,
    first: !messages.some((m) => m.role === "assistant")
  }
}

const words = (text: string): Array<string> => text.match(/\S+\s*|\s+/g) ?? []

export const ScriptedModel: ModelProvider = {
  route: "scripted",
  stream: (request: ModelRequest) =>
    Stream.suspend(() => {
      const state = turnState(request.messages)
      const script = parseScript(state.text, state.first)
      const action = script.actions[state.step] ??
        Action.Text({ text: state.lastToolOutput === undefined ? "Done." : `Result: ${state.lastToolOutput}` })
      const inputTokens = estimateTokens(
        request.system + JSON.stringify(request.messages) + JSON.stringify(request.tools)
      )
      const reasoning = script.reasoning !== undefined && state.step === 0
        ? words(script.reasoning).map((w) => ModelEvent.ReasoningDelta({ text: w }))
        : []
      const answer = (text: string) =>
        Stream.fromIterable<ModelEvent>([
          ...reasoning,
          ...words(text).map((w) => ModelEvent.TextDelta({ text: w })),
          ModelEvent.Finish({ reason: "stop", inputTokens, outputTokens: estimateTokens(text) })
        ])
      return Action.$match(action, {
        Fail: () => Stream.fail(new ModelUnavailable({ message: "the scripted model was told to fail (/fail)" })),
        Tool: ({ calls }) =>
          Stream.fromIterable<ModelEvent>([
            ...reasoning,
            // One call is `call_<step>`; several in one step are `call_<step>_<n>`.
            ...calls.map((call, i) =>
              ModelEvent.ToolCall({
                id: calls.length === 1 ? `call_${state.step + 1}` : `call_${state.step + 1}_${i + 1}`,
                name: call.name,
                input: call.input
              })
            ),
            ModelEvent.Finish({
              reason: "tool-calls",
              inputTokens,
              outputTokens: estimateTokens(calls.map((c) => JSON.stringify(c.input) + c.name).join(""))
            })
          ]),
        Text: ({ text }) => answer(text),
        Output: ({ json }) => answer(json),
        ShowTools: () =>
          answer(JSON.stringify(request.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema }))))
      })
    })
}

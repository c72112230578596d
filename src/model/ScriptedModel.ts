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
 * Without directives it answers `Echo: <message>`. After tool steps with no
 * final directive it answers `Result: <last tool output>`. Text streams in
 * word-sized deltas; tokens are estimated at four characters each.
 */
import { Option, Schema, Stream } from "effect"
import type { Message } from "../../domain/Conversation.ts"
import {
  estimateTokens,
  type ModelEvent,
  type ModelProvider,
  type ModelRequest,
  ModelUnavailable
} from "./ModelProvider.ts"

type Action =
  | { readonly _tag: "Tool"; readonly calls: ReadonlyArray<{ readonly name: string; readonly input: unknown }> }
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Output"; readonly json: string }
  | { readonly _tag: "Fail" }
  | { readonly _tag: "ShowTools" }

interface Script {
  readonly actions: ReadonlyArray<Action>
  readonly reasoning: string | undefined
}

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

/** A directive's JSON argument; text that is not JSON is passed on as `{ unparsed }`. */
const parseInput = (raw: string): unknown =>
  raw.trim() === "" ? {} : Option.getOrElse(decodeJson(raw), () => ({ unparsed: raw }))

export const parseScript = (message: string): Script => {
  const actions: Array<Action> = []
  let reasoning: string | undefined
  for (const line of message.split("\n")) {
    const match = /^\/([\w-]+)\s?(.*)$/.exec(line.trim())
    if (!match) continue
    const [, directive, rest] = match
    if (directive === "tool") {
      const [, name = "", input = ""] = /^(\S+)\s*(.*)$/.exec(rest) ?? []
      actions.push({ _tag: "Tool", calls: [{ name, input: parseInput(input) }] })
    } else if (directive === "tools") {
      const list = parseInput(rest)
      const calls = Array.isArray(list)
        ? list.map((c: unknown) => {
          const call = typeof c === "object" && c !== null ? (c as Record<string, unknown>) : {}
          return { name: String(call["name"] ?? ""), input: call["input"] ?? {} }
        })
        : []
      actions.push({ _tag: "Tool", calls })
    } else if (directive === "delegate") {
      const tasks = parseInput(rest)
      actions.push({
        _tag: "Tool",
        calls: (Array.isArray(tasks) ? tasks : [tasks]).map((input: unknown) => ({ name: "delegate_task", input }))
      })
    } else if (directive === "text") actions.push({ _tag: "Text", text: rest })
    else if (directive === "output") actions.push({ _tag: "Output", json: rest })
    else if (directive === "reason") reasoning = rest
    else if (directive === "fail") actions.push({ _tag: "Fail" })
    else if (directive === "show-tools") actions.push({ _tag: "ShowTools" })
    else if (directive === "steps") {
      const n = Math.max(1, Math.min(1000, Number.parseInt(rest, 10) || 1))
      for (let i = 1; i < n; i++) actions.push({ _tag: "Tool", calls: [{ name: "noop", input: { step: i } }] })
      actions.push({ _tag: "Text", text: `Finished after ${n} steps.` })
    }
  }
  if (actions.length === 0) actions.push({ _tag: "Text", text: `Echo: ${message}` })
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
    lastToolOutput: lastTool?.role === "tool" ? lastTool.content : undefined
  }
}

const words = (text: string): Array<string> => text.match(/\S+\s*|\s+/g) ?? []

export const ScriptedModel: ModelProvider = {
  route: "scripted",
  stream: (request: ModelRequest) =>
    Stream.suspend(() => {
      const state = turnState(request.messages)
      const script = parseScript(state.text)
      const action: Action = script.actions[state.step] ??
        { _tag: "Text", text: state.lastToolOutput === undefined ? "Done." : `Result: ${state.lastToolOutput}` }
      const inputTokens = estimateTokens(
        request.system + JSON.stringify(request.messages) + JSON.stringify(request.tools)
      )
      const events: Array<ModelEvent> = []
      if (script.reasoning !== undefined && state.step === 0) {
        for (const w of words(script.reasoning)) events.push({ _tag: "ReasoningDelta", text: w })
      }
      switch (action._tag) {
        case "Fail":
          return Stream.fail(new ModelUnavailable({ message: "the scripted model was told to fail (/fail)" }))
        case "Tool": {
          // One call is `call_<step>`; several in one step are `call_<step>_<n>`.
          action.calls.forEach((call, i) => {
            const id = action.calls.length === 1 ? `call_${state.step + 1}` : `call_${state.step + 1}_${i + 1}`
            events.push({ _tag: "ToolCall", id, name: call.name, input: call.input })
          })
          const out = estimateTokens(action.calls.map((c) => JSON.stringify(c.input) + c.name).join(""))
          events.push({ _tag: "Finish", reason: "tool-calls", inputTokens, outputTokens: out })
          break
        }
        case "Text":
        case "Output":
        case "ShowTools": {
          const text = action._tag === "Text"
            ? action.text
            : action._tag === "Output"
            ? action.json
            : JSON.stringify(request.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema })))
          for (const w of words(text)) events.push({ _tag: "TextDelta", text: w })
          events.push({ _tag: "Finish", reason: "stop", inputTokens, outputTokens: estimateTokens(text) })
          break
        }
      }
      return Stream.fromIterable(events)
    })
}

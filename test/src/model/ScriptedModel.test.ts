/**
 * What the scripted model answers a person: its first echo in a thread says
 * what it is and how to plug in a real model, later ones do not, and a
 * `Result:` quotes the tool's output without the untrusted-data envelope the
 * model itself reads.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import type { Message } from "../../../domain/Conversation.ts"
import { ToolCallId } from "../../../domain/Ids.ts"
import { introduction, ScriptedModel } from "../../../src/model/ScriptedModel.ts"
import { envelope } from "../../../src/tools/ToolResults.ts"

/** The answer the scripted model streams to `messages`. */
const answer = (messages: ReadonlyArray<Message>) =>
  ScriptedModel.stream({ system: "", messages, tools: [], outputSchema: undefined }).pipe(
    Stream.runCollect,
    Effect.map((events) => events.map((e) => e._tag === "TextDelta" ? e.text : "").join(""))
  )

const callId = ToolCallId.make("call_1")
const toolTurn = (content: string): ReadonlyArray<Message> => [
  { role: "user", content: "/tool mcp__docs__read {}" },
  { role: "assistant", content: "", toolCalls: [{ id: callId, name: "mcp__docs__read", input: {} }] },
  { role: "tool", toolCallId: callId, toolName: "mcp__docs__read", content, isError: false }
]

describe("the scripted model", () => {
  it.effect("says what it is and names the setting for a real model in its first answer of a thread", () =>
    Effect.gen(function*() {
      assert.match(
        introduction,
        /^This is the scripted development model.*SVC_BAND_CORE=openai:<model>.*models\.md\)\.$/
      )
      assert.strictEqual(yield* answer([{ role: "user", content: "hello" }]), `${introduction}\n\nEcho: hello`)
    }))

  it.effect("answers later messages of the thread without the introduction", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* answer([
          { role: "user", content: "hello" },
          { role: "assistant", content: `${introduction}\n\nEcho: hello`, toolCalls: [] },
          { role: "user", content: "again" }
        ]),
        "Echo: again"
      )
    }))

  it.effect("answers a directive as told, first in a thread or not", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* answer([{ role: "user", content: "/text Just this." }]), "Just this.")
    }))

  it.effect("quotes the last tool output without the envelope the model read it in", () =>
    Effect.gen(function*() {
      const output = "line one </untrusted_data> not closing\nline two"
      const content = envelope("mcp__docs__read", output)
      assert.include(content, "<untrusted_data source=\"mcp__docs__read\">")
      const text = yield* answer(toolTurn(content))
      assert.strictEqual(text, `Result: ${output}`)
      assert.notInclude(text, "<untrusted_data")
    }))

  it.effect("keeps a note after the envelope (an archived or spilled result) and unwraps only the envelope", () =>
    Effect.gen(function*() {
      const note = "[The full result (5000 bytes) is in the workspace at results/1.json.]"
      assert.strictEqual(
        yield* answer(toolTurn(`${envelope("mcp__docs__read", "head")}\n${note}`)),
        `Result: head\n${note}`
      )
    }))
})

/**
 * The parts of a thread's messages: the assistant's folded from stored chunks
 * exactly as the AI SDK's `readUIMessageStream` folds them (a table of
 * streams, each checked against the SDK's own fold), with a denied call's
 * approval added and one part per call; rebuilt from checkpointed steps once
 * the stream is gone; the user's attachments before their text.
 */
import { assert, describe, it } from "@effect/vitest"
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai"
import { Effect } from "effect"
import type { Chunk } from "../../../domain/Chunk.ts"
import { ToolCallId, WorkerId } from "../../../domain/Ids.ts"
import type { MessagePart } from "../../../domain/ThreadMessage.ts"
import { partsOfSteps, partsOfStream, userParts } from "../../../src/threads/MessageParts.ts"

const foldedByAi = (chunks: ReadonlyArray<Chunk>) =>
  Effect.promise(async () => {
    let message: UIMessage | undefined
    const stream = ReadableStream.from(chunks.map((c): UIMessageChunk => JSON.parse(JSON.stringify(c))))
    for await (const snapshot of readUIMessageStream({ stream })) message = snapshot
    return JSON.parse(JSON.stringify(message?.parts ?? []))
  })

const echo = (id: string): ReadonlyArray<Chunk> => [
  { type: "tool-input-start", toolCallId: id, toolName: "echo" },
  { type: "tool-input-available", toolCallId: id, toolName: "echo", input: { text: "hi" } }
]

const cases: ReadonlyArray<{
  readonly name: string
  readonly chunks: ReadonlyArray<Chunk>
  readonly parts: ReadonlyArray<MessagePart>
}> = [
  {
    name: "text and reasoning, the text still streaming",
    chunks: [
      { type: "start", messageId: "run_1" },
      { type: "start-step" },
      { type: "reasoning-start", id: "rs_1" },
      { type: "reasoning-delta", id: "rs_1", delta: "think " },
      { type: "reasoning-delta", id: "rs_1", delta: "more" },
      { type: "reasoning-end", id: "rs_1" },
      { type: "text-start", id: "txt_1" },
      { type: "text-delta", id: "txt_1", delta: "Hel" },
      { type: "text-delta", id: "txt_1", delta: "lo" }
    ],
    parts: [
      { type: "step-start" },
      { type: "reasoning", id: "rs_1", text: "think more", state: "done" },
      { type: "text", text: "Hello", state: "streaming" }
    ]
  },
  {
    name: "a call whose input is still streaming, one finished, one failed in its lifecycle, one failing as expected",
    chunks: [
      { type: "start-step" },
      { type: "tool-input-start", toolCallId: "tc_a", toolName: "slow" },
      ...echo("tc_b"),
      ...echo("tc_c"),
      ...echo("tc_d"),
      { type: "tool-output-available", toolCallId: "tc_b", output: [{ type: "text", text: "hi" }] },
      {
        type: "tool-output-error",
        toolCallId: "tc_c",
        errorText: "step_duration_exceeded: the step ran past its time bound."
      },
      {
        type: "tool-output-available",
        toolCallId: "tc_d",
        output: { type: "tool-output-error", error: { code: "tool_error", message: "it failed" } }
      },
      { type: "finish-step" }
    ],
    parts: [
      { type: "step-start" },
      { type: "tool-slow", toolCallId: "tc_a", state: "input-streaming" },
      {
        type: "tool-echo",
        toolCallId: "tc_b",
        state: "output-available",
        input: { text: "hi" },
        output: [{ type: "text", text: "hi" }]
      },
      {
        type: "tool-echo",
        toolCallId: "tc_c",
        state: "output-error",
        input: { text: "hi" },
        errorText: "step_duration_exceeded: the step ran past its time bound."
      },
      {
        type: "tool-echo",
        toolCallId: "tc_d",
        state: "output-available",
        input: { text: "hi" },
        output: { type: "tool-output-error", error: { code: "tool_error", message: "it failed" } }
      }
    ]
  },
  {
    name: "a step replayed after its executor died: its first try goes, its start stays",
    chunks: [
      { type: "start-step" },
      { type: "text-start", id: "txt_1" },
      { type: "text-delta", id: "txt_1", delta: "half an ans" },
      { type: "reset-step" },
      { type: "start-step" },
      { type: "text-start", id: "txt_2" },
      { type: "text-delta", id: "txt_2", delta: "whole" },
      { type: "text-end", id: "txt_2" },
      { type: "finish-step" }
    ],
    parts: [{ type: "step-start" }, { type: "step-start" }, { type: "text", text: "whole", state: "done" }]
  },
  {
    name: "data parts as the stream carried them; one with the id of an earlier one replaces it",
    chunks: [
      { type: "data-svc-task", id: "wkr_1", data: { label: "a", workerRef: WorkerId.make("wkr_1"), role: "worker" } },
      { type: "data-svc-task", id: "wkr_1", data: { label: "b", workerRef: WorkerId.make("wkr_1"), role: "worker" } },
      { type: "data-svc-terminal", data: { terminalReason: null } }
    ],
    parts: [
      { type: "data-svc-task", id: "wkr_1", data: { label: "b", workerRef: WorkerId.make("wkr_1"), role: "worker" } },
      { type: "data-svc-terminal", data: { terminalReason: null } }
    ]
  }
]

describe("MessageParts", () => {
  it.effect.each(cases)("the stream's fold equals the AI SDK's: $name", ({ chunks, parts }) =>
    Effect.gen(function*() {
      assert.deepStrictEqual(partsOfStream(chunks, () => undefined), parts)
      assert.deepStrictEqual(partsOfStream(chunks, () => undefined), yield* foldedByAi(chunks))
    }))

  it("a denied call gets the approval validateUIMessages requires: its approval request, the reason the model read", () => {
    const requested: Chunk = {
      type: "data-svc-input-requested",
      data: { interactionId: "tar_1", toolCallId: "tc_a", request: { kind: "approval" }, expiresAt: "x" }
    }
    const denied = (id: string, reason: string): ReadonlyArray<Chunk> => [
      { type: "data-svc-tool-denied", data: { toolCallId: id, toolName: "echo", reason } },
      { type: "tool-output-denied", toolCallId: id }
    ]
    const parts = partsOfStream([
      { type: "start-step" },
      ...echo("tc_a"),
      ...echo("tc_b"),
      requested,
      { type: "finish", finishReason: "other" },
      // The parked step resumes: it announces its call again, which stays one part, where it was.
      { type: "start", messageId: "run_1" },
      { type: "start-step" },
      ...echo("tc_a"),
      ...denied("tc_a", "Not now."),
      // A call without an approval request on record: its own id stands for it.
      ...denied("tc_b", "Blocked by policy.")
    ], (id) => (id === "tc_a" ? "tar_1" : undefined))
    const tools = parts.filter((p) => p.type === "tool-echo")
    assert.deepStrictEqual(tools, [
      {
        type: "tool-echo",
        toolCallId: "tc_a",
        state: "output-denied",
        input: { text: "hi" },
        approval: { id: "tar_1", approved: false, reason: "Not now." }
      },
      {
        type: "tool-echo",
        toolCallId: "tc_b",
        state: "output-denied",
        input: { text: "hi" },
        approval: { id: "tc_b", approved: false, reason: "Blocked by policy." }
      }
    ])
    assert.deepStrictEqual(parts.map((p) => p.type), [
      "step-start",
      "tool-echo",
      "tool-echo",
      "data-svc-input-requested",
      "step-start",
      "data-svc-tool-denied",
      "data-svc-tool-denied"
    ])
  })

  it("without the stream: the steps as the model saw them, a delivered held message opening its step", () => {
    const a = ToolCallId.make("tc_a")
    const b = ToolCallId.make("tc_b")
    const parts = partsOfSteps([
      [
        { role: "assistant", content: "", toolCalls: [{ id: a, name: "echo", input: { text: "hi" } }] },
        { role: "tool", toolCallId: a, toolName: "echo", content: "hi", isError: false }
      ],
      [
        { role: "user", content: "and then?" },
        { role: "assistant", content: "Checking.", toolCalls: [{ id: b, name: "fail", input: {} }] },
        { role: "tool", toolCallId: b, toolName: "fail", content: "tool_error: it failed", isError: true }
      ],
      [{ role: "assistant", content: "Done.", toolCalls: [] }]
    ], [{ id: "fu_1", text: "and then?" }])
    assert.deepStrictEqual(parts, [
      { type: "step-start" },
      { type: "tool-echo", toolCallId: "tc_a", state: "output-available", input: { text: "hi" }, output: "hi" },
      { type: "data-svc-followup-replayed", data: { followupId: "fu_1", text: "and then?" } },
      { type: "step-start" },
      { type: "text", text: "Checking.", state: "done" },
      { type: "tool-fail", toolCallId: "tc_b", state: "output-error", input: {}, errorText: "tool_error: it failed" },
      { type: "step-start" },
      { type: "text", text: "Done.", state: "done" }
    ])
  })

  it("the user's message: attachments first, then the text (none when there is only an attachment)", () => {
    const attachment = {
      artifactId: "art_1",
      filename: "notes.txt",
      mediaType: "text/plain",
      bytes: 4,
      sha256: "00",
      as: "text" as const
    }
    assert.deepStrictEqual(userParts("look", [attachment], "https://svc.example"), [
      { type: "file", mediaType: "text/plain", filename: "notes.txt", url: "https://svc.example/v1/artifacts/art_1" },
      { type: "text", text: "look" }
    ])
    assert.deepStrictEqual(userParts("", [attachment], "https://svc.example").map((p) => p.type), ["file"])
    assert.deepStrictEqual(userParts("hi", [], "https://svc.example"), [{ type: "text", text: "hi" }])
  })
})

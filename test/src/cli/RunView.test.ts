/**
 * The terminal's lines for a call's end (spec 6.2): a result, an expected
 * failure (tool-output-available with output.type 'tool-output-error'), the
 * lifecycle tool-output-error, and a denial with its reason (or without one,
 * for a stream stored before the reason was streamed).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Readable } from "node:stream"
import type { Chunk } from "../../../domain/Chunk.ts"
import { Invocation } from "../../../src/cli/Invocation.ts"
import { Output } from "../../../src/cli/Output.ts"
import { runView } from "../../../src/cli/RunView.ts"

/** The lines `chunks` print on stdout. */
const linesOf = (chunks: ReadonlyArray<Chunk>) => {
  const lines: Array<string> = []
  const output = Layer.succeed(Output)({
    write: (text) => Effect.sync(() => void lines.push(text)),
    line: (text) => Effect.sync(() => void lines.push(text)),
    endLine: Effect.void,
    error: () => Effect.void,
    progress: () => Effect.void
  })
  return Effect.gen(function*() {
    const view = yield* runView
    yield* Effect.forEach(chunks, view.show, { discard: true })
    return lines
  }).pipe(
    Effect.provide(output),
    Effect.provideService(Invocation, { name: "agent-service", stdin: Readable.from([]) })
  )
}

const call = (toolCallId: string, toolName: string): Chunk => ({
  type: "tool-input-available",
  toolCallId,
  toolName,
  input: {}
})

describe("RunView", () => {
  it.effect("a result, an expected failure, a call cut short, a denial with its reason and one without", () =>
    Effect.gen(function*() {
      const lines = yield* linesOf([
        call("tc_1", "mcp__s__echo"),
        { type: "tool-output-available", toolCallId: "tc_1", output: [{ type: "text", text: "hi" }] },
        call("tc_2", "mcp__s__fail"),
        {
          type: "tool-output-available",
          toolCallId: "tc_2",
          output: { type: "tool-output-error", error: { code: "tool_error", message: "it failed" } }
        },
        call("tc_3", "bash"),
        {
          type: "tool-output-error",
          toolCallId: "tc_3",
          errorText: "step_duration_exceeded: the step ran past its time bound."
        },
        call("tc_4", "mcp__s__echo"),
        {
          type: "data-svc-tool-denied",
          data: { toolCallId: "tc_4", toolName: "mcp__s__echo", reason: "Not on Fridays." }
        },
        { type: "tool-output-denied", toolCallId: "tc_4" },
        call("tc_5", "mcp__s__echo"),
        { type: "tool-output-denied", toolCallId: "tc_5" }
      ])
      assert.deepStrictEqual(lines, [
        "[tool] mcp__s__echo {}",
        `[result] mcp__s__echo [{"type":"text","text":"hi"}]`,
        "[tool] mcp__s__fail {}",
        "[tool error] mcp__s__fail: tool_error: it failed",
        "[tool] bash {}",
        "[tool error] bash: step_duration_exceeded: the step ran past its time bound.",
        "[tool] mcp__s__echo {}",
        "[denied] mcp__s__echo: Not on Fridays.",
        "[tool] mcp__s__echo {}",
        "[denied] mcp__s__echo"
      ])
    }))
})

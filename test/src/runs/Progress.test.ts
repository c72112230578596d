/**
 * What progress snapshots say (src/runs/Progress.ts), as a table: the summary
 * of a step's calls while some still run, the delegated tasks a step waits
 * on, and a snapshot's chunk (summaryAvailable true exactly on summaries).
 */
import { assert, describe, it } from "@effect/vitest"
import type { ToolCall } from "../../../domain/Conversation.ts"
import { ToolCallId } from "../../../domain/Ids.ts"
import * as Progress from "../../../src/runs/Progress.ts"

const call = (id: string, name: string, input: unknown = {}): ToolCall => ({ id: ToolCallId.make(id), name, input })

const calls = [call("c1", "mcp__a__read"), call("c2", "mcp__b__wait"), call("c3", "bash")]

describe("Progress", () => {
  it.each([
    {
      done: [],
      elapsedMs: 5_000,
      text: "Tool calls: 0 of 3 done; waiting on mcp__a__read, mcp__b__wait, bash (5 s)"
    },
    {
      done: ["c1", "c3"],
      elapsedMs: 10_400,
      text: "Tool calls: 2 of 3 done (mcp__a__read, bash); waiting on mcp__b__wait (10 s)"
    }
  ])("calls done $done after $elapsedMs ms: $text", ({ done, elapsedMs, text }) => {
    assert.strictEqual(Progress.callsText(calls, new Set(done), elapsedMs), text)
  })

  it("the tasks a step waits on are named by their labels (a call whose input is not a task by its id)", () => {
    const delegated = [
      call("d1", "delegate_task", { label: "Research pricing", prompt: "..." }),
      call("d2", "delegate_task", { label: "Draft the email", prompt: "...", role: "advisor" }),
      call("d3", "delegate_task", { prompt: "no label" })
    ]
    assert.strictEqual(
      Progress.tasksText(delegated, ["d1", "d2"]),
      "Waiting on 2 delegated tasks: Research pricing; Draft the email"
    )
    assert.strictEqual(Progress.tasksText(delegated, ["d3"]), "Waiting on 1 delegated task: d3")
  })

  it("a snapshot is one part under the run's stable id; summaryAvailable is true exactly on summaries", () => {
    assert.deepStrictEqual(Progress.snapshot("run_1", "activity", "Thinking"), {
      type: "data-svc-progress",
      id: "progress_run_1",
      data: { kind: "activity", summaryAvailable: false, text: "Thinking" }
    })
    assert.deepStrictEqual(Progress.snapshot("run_1", "summary", "Waiting on 1 delegated task: x"), {
      type: "data-svc-progress",
      id: "progress_run_1",
      data: { kind: "summary", summaryAvailable: true, text: "Waiting on 1 delegated task: x" }
    })
  })
})

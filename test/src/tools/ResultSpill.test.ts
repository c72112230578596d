/**
 * The file an over-cap result is kept in (spec 4.6 rule 5): JSON laid out
 * one value per line without changing a literal, other text as it is, a name
 * made of the call id; and the outcome of a spill that failed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fileOf, layOut, recover } from "../../../src/tools/ResultSpill.ts"
import { SpillFailed } from "../../../src/tools/ToolFamily.ts"

describe("result spill", () => {
  it("layOut matches JSON.stringify(value, null, 2) on ordinary JSON, whatever its spacing", () => {
    const value = { a: [1, 2, { b: "x, y: [z]" }], c: {}, d: [], e: null, f: "quote \" and \\ and {", g: [[]] }
    assert.strictEqual(layOut(JSON.stringify(value)), `${JSON.stringify(value, null, 2)}\n`)
    assert.strictEqual(layOut(JSON.stringify(value, null, 7)), `${JSON.stringify(value, null, 2)}\n`)
    assert.strictEqual(layOut("[ { } , [ ] ]"), "[\n  {},\n  []\n]\n")
  })

  it("layOut keeps every literal as written: numbers beyond double precision, escapes", () => {
    assert.strictEqual(
      layOut("{\"n\":12345678901234567890,\"s\":\"\\u00e9\\n\"}"),
      "{\n  \"n\": 12345678901234567890,\n  \"s\": \"\\u00e9\\n\"\n}\n"
    )
  })

  it("fileOf: JSON goes to <id>.json laid out, other text to <id>.txt as it is; the name keeps only safe characters", () => {
    assert.deepStrictEqual(fileOf("tc_abc", "[1,2]"), { name: "tc_abc.json", content: "[\n  1,\n  2\n]\n" })
    assert.deepStrictEqual(fileOf("tc_abc", "[1,2] and more"), { name: "tc_abc.txt", content: "[1,2] and more" })
    assert.strictEqual(fileOf("../call.1/x", "text").name, "___call_1_x.txt")
  })

  it.effect("recover: without an overflow nothing is spilled; a failed spill says so and keeps recovery none", () =>
    Effect.gen(function*() {
      const plain = { output: "x", text: "x", isError: false }
      assert.deepStrictEqual(yield* recover(plain, "tc_1", () => Effect.die("not called")), plain)
      const over = {
        output: "x",
        text: "head",
        modelText: "<env>head</env>",
        isError: false,
        overflow: { bytes: 9, capBytes: 4, full: "head tail" }
      }
      const failed = yield* recover(over, "tc_1", () => Effect.fail(new SpillFailed({ message: "disk full" })))
      const message = "the full result could not be kept in the workspace: disk full"
      assert.deepStrictEqual(failed, {
        ...over,
        text: `head\n[Only this preview is available: ${message}.]`,
        modelText: `<env>head</env>\n[Only this preview is available: ${message}.]`,
        overflow: { ...over.overflow, recovery: { kind: "none", message } }
      })
    }))
})

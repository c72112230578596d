/**
 * The merge policy's rule: which checks of a head commit let a merge through.
 * Check runs count green when completed as success, neutral or skipped;
 * statuses when success; anything unfinished is pending.
 */
import { assert, describe, it } from "@effect/vitest"
import { defaultMergePolicy } from "../../../domain/Codehost.ts"
import { fromCheckRun, fromStatus, verdict } from "../../../src/codehost/MergeChecks.ts"

const run = (name: string, status: string, conclusion: string | null) => fromCheckRun({ name, status, conclusion })

describe("MergeChecks.verdict", () => {
  it("reads check runs and statuses as green, pending or failed", () => {
    assert.deepStrictEqual(
      [
        run("a", "completed", "success"),
        run("b", "completed", "neutral"),
        run("c", "completed", "skipped"),
        run("d", "in_progress", null),
        run("e", "completed", "timed_out"),
        run("f", "completed", "action_required"),
        fromStatus({ context: "g", state: "success" }),
        fromStatus({ context: "h", state: "pending" }),
        fromStatus({ context: "i", state: "error" })
      ].map((c) => c.state),
      ["green", "green", "green", "pending", "failed", "failed", "green", "pending", "failed"]
    )
  })

  it("the default policy: every reported check green; none reported is no objection", () => {
    assert.isUndefined(verdict(defaultMergePolicy, []))
    assert.isUndefined(verdict(defaultMergePolicy, [run("ci", "completed", "success")]))
    assert.strictEqual(
      verdict(defaultMergePolicy, [
        run("ci", "completed", "failure"),
        run("e2e", "queued", null),
        fromStatus({ context: "deploy", state: "pending" })
      ]),
      "failed: ci; not finished: e2e, deploy"
    )
  })

  it("named checks must be reported and green; with allChecksGreen off the others do not count", () => {
    const policy = { allChecksGreen: false, requiredChecks: ["ci", "lint"] }
    assert.strictEqual(verdict(policy, [run("other", "completed", "failure")]), "required but not reported: ci, lint")
    assert.strictEqual(
      verdict(policy, [run("ci", "completed", "success"), fromStatus({ context: "lint", state: "failure" })]),
      "failed: lint"
    )
    assert.isUndefined(
      verdict(policy, [
        run("ci", "completed", "success"),
        run("lint", "completed", "success"),
        run("x", "queued", null)
      ])
    )
    assert.strictEqual(
      verdict({ allChecksGreen: true, requiredChecks: ["ci"] }, [run("x", "completed", "success")]),
      "required but not reported: ci"
    )
  })
})

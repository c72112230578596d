/**
 * The tool gate's decision table (spec 2.1.5, 4.6 rule 4, 6.1), without a
 * database: what is known of a call -> what happens to it, or the one fact the
 * gate must look up first (the thread's remembered approvals only under
 * approval 'once', the hook only for a call the policy did not waive). The
 * wiring (a real hook server, real approval memory) is ToolGate.test.ts's.
 */
import { assert, describe, it } from "@effect/vitest"
import { HookId, InteractionId } from "../../../domain/Ids.ts"
import type { HookDecision, OnHookError } from "../../../domain/ToolApprovalHook.ts"
import {
  decide,
  type Gate,
  type GateDecision,
  type GateFacts,
  type GateHook,
  type HookReview
} from "../../../src/runs/GateDecision.ts"
import type { ToolPolicyRef } from "../../../src/tools/ToolFamily.ts"
import * as ToolOutcome from "../../../src/tools/ToolOutcome.ts"

/** The tool under test is `write` of its connection. */
const policy = (approval: ToolPolicyRef["approval"], gatedTools: ReadonlyArray<string> | null = null) => ({
  approval,
  gatedTools,
  originalName: "write"
})
const always = policy("always")
const once = policy("once")

const hookId = HookId.make("hook_reviewer")
const hook = (onHookError: OnHookError = "deny"): GateHook => ({ id: hookId, config: { onHookError } })

const reviewId = InteractionId.make("tar_review")
const answered = (decision: HookDecision["decision"], reason?: string): HookReview => ({
  _tag: "Answered",
  interactionId: reviewId,
  decision: reason === undefined ? { decision } : { decision, reason }
})
const failed: HookReview = { _tag: "Failed", interactionId: reviewId, message: "the hook answered HTTP 500" }
const hookFailure = "Approval hook failed: the hook answered HTTP 500"

const run: Gate = { _tag: "Run" }
const person = (remember: boolean): Gate => ({ _tag: "Approval", hookId: null, reason: null, remember })
const byHook = (reason: string | null, remember: boolean): Gate => ({
  _tag: "Approval",
  hookId,
  reason,
  remember,
  interactionId: reviewId
})

const decided = (gate: Gate, rememberApproval = false, hookFailure: string | null = null): GateDecision<GateHook> => ({
  _tag: "Decided",
  gate,
  rememberApproval,
  hookFailure
})
const lookUpMemory: GateDecision<GateHook> = { _tag: "LookUpMemory" }
const askHook = (onHookError: OnHookError = "deny"): GateDecision<GateHook> => ({
  _tag: "AskHook",
  hook: hook(onHookError)
})

const question = {
  title: "Pick a color",
  questions: [{ id: "color", prompt: "Which color?", options: [{ id: "red", label: "Red" }], multiple: true }]
}

interface Row {
  readonly name: string
  /** Over a call to `write` with no policy, no hook, nothing looked up. */
  readonly facts: Partial<GateFacts<GateHook>>
  readonly expected: GateDecision<GateHook>
}

const rows: ReadonlyArray<Row> = [
  // ask_question
  {
    name: "ask_question with valid input waits for the user, its flags resolved",
    facts: { isQuestion: true, input: question },
    expected: decided({
      _tag: "Question",
      request: {
        ...question,
        questions: question.questions.map((q) => ({ ...q, multiline: false, allowOther: false }))
      }
    })
  },
  {
    name: "ask_question with malformed input is an error result, not a question",
    facts: { isQuestion: true, input: { title: "", questions: "which?" } },
    expected: decided({
      _tag: "Invalid",
      outcome: ToolOutcome.failure(
        "invalid_tool_input",
        "Invalid input for ask_question: title: title must not be empty; questions: Expected array"
      )
    })
  },
  {
    name: "ask_question waits for the user even when autoAllowed, gated and hooked",
    facts: { isQuestion: true, input: { title: "Go?" }, autoAllowed: true, policy: always, hook: hook() },
    expected: decided({ _tag: "Question", request: { title: "Go?" } })
  },
  {
    name: "ask_question not offered (no userInteraction) is an ordinary call: no policy, no hook, runs",
    facts: { isQuestion: false, input: question },
    expected: decided(run)
  },
  // autoAllow and the connection's policy
  {
    name: "autoAllow runs the call under 'always' without asking the hook",
    facts: { autoAllowed: true, policy: always, hook: hook() },
    expected: decided(run)
  },
  {
    name: "policy 'never' waives review, even with a hook",
    facts: { policy: policy("never"), hook: hook() },
    expected: decided(run)
  },
  {
    name: "policy 'always' without a hook waits for a person, nothing to remember",
    facts: { policy: always },
    expected: decided(person(false))
  },
  {
    name: "policy 'always' with the tool in gatedTools waits for a person",
    facts: { policy: policy("always", ["read", "write"]) },
    expected: decided(person(false))
  },
  {
    name: "policy 'always' with the tool not in gatedTools waives review, even with a hook",
    facts: { policy: policy("always", ["read"]), hook: hook() },
    expected: decided(run)
  },
  {
    name: "policy 'always' with a hook asks the hook, without looking up remembered approvals",
    facts: { policy: always, hook: hook() },
    expected: askHook()
  },
  {
    name: "policy 'once' first looks up the thread's remembered approvals",
    facts: { policy: once, hook: hook() },
    expected: lookUpMemory
  },
  {
    name: "policy 'once' with this exact call remembered on the thread runs, without asking the hook",
    facts: { policy: once, hook: hook(), remembered: true },
    expected: decided(run)
  },
  {
    name: "policy 'once' not remembered, without a hook: waits for a person, the approval to be remembered",
    facts: { policy: once, remembered: false },
    expected: decided(person(true))
  },
  {
    name: "policy 'once' not remembered, with a hook: asks the hook",
    facts: { policy: once, hook: hook("pause"), remembered: false },
    expected: askHook("pause")
  },
  {
    name: "policy 'once' with the tool not in gatedTools waives review, nothing looked up",
    facts: { policy: policy("once", ["read"]), hook: hook() },
    expected: decided(run)
  },
  {
    name: "no approval on the connection and no hook: runs",
    facts: { policy: policy(null) },
    expected: decided(run)
  },
  {
    name: "no approval on the connection with a hook: the hook decides",
    facts: { policy: policy(null), hook: hook() },
    expected: askHook()
  },
  {
    name: "a call no family claims (no policy) without a hook runs",
    facts: {},
    expected: decided(run)
  },
  {
    name: "a call no family claims (no policy) goes to the hook",
    facts: { hook: hook("fail-run") },
    expected: askHook("fail-run")
  },
  // the hook's answer
  {
    name: "the hook allows with no approval on the connection: runs, nothing remembered",
    facts: { policy: policy(null), hook: hook(), review: answered("allow") },
    expected: decided(run)
  },
  {
    name: "policy 'always' and the hook allows: runs, nothing remembered",
    facts: { policy: always, hook: hook(), review: answered("allow") },
    expected: decided(run)
  },
  {
    name: "policy 'once' and the hook allows: runs and the approval is remembered for the thread",
    facts: { policy: once, hook: hook(), remembered: false, review: answered("allow") },
    expected: decided(run, true)
  },
  {
    name: "the hook denies with a reason: denied with it verbatim",
    facts: { policy: always, hook: hook(), review: answered("deny", "Not on Fridays.") },
    expected: decided({ _tag: "Denied", reason: "Not on Fridays." })
  },
  {
    name: "the hook denies without a reason: denied, reason null",
    facts: { hook: hook(), review: answered("deny") },
    expected: decided({ _tag: "Denied", reason: null })
  },
  {
    name: "the hook pauses: waits for a person on the interaction the hook saw, with its reason",
    facts: { policy: always, hook: hook(), review: answered("pause", "Needs a human.") },
    expected: decided(byHook("Needs a human.", false))
  },
  {
    name: "policy 'once' and the hook pauses: the approval is to be remembered",
    facts: { policy: once, hook: hook(), remembered: false, review: answered("pause") },
    expected: decided(byHook(null, true))
  },
  // a hook that cannot answer: onHookError
  {
    name: "a failing hook under onHookError 'deny' (the default): denied, the failure reported",
    facts: { policy: always, hook: hook("deny"), review: failed },
    expected: decided(
      { _tag: "Denied", reason: "The approval hook could not be reached, so the call was denied." },
      false,
      hookFailure
    )
  },
  {
    name: "a failing hook under onHookError 'pause': waits for a person on the interaction the hook saw",
    facts: { policy: once, hook: hook("pause"), remembered: false, review: failed },
    expected: decided(byHook(null, true), false, hookFailure)
  },
  {
    name: "a failing hook under onHookError 'fail-run': the run fails with the hook's failure",
    facts: { policy: policy(null), hook: hook("fail-run"), review: failed },
    expected: decided(
      { _tag: "FailRun", message: "The approval hook failed: the hook answered HTTP 500" },
      false,
      hookFailure
    )
  }
]

const base: GateFacts<GateHook> = {
  isQuestion: false,
  input: { path: "a.txt" },
  autoAllowed: false,
  policy: undefined,
  hook: undefined
}

describe("GateDecision", () => {
  it.each(rows)("$name", ({ facts, expected }) => {
    assert.deepStrictEqual(decide({ ...base, ...facts }), expected)
  })
})

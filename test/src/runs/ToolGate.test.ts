/**
 * The tool gate on its own (spec 2.1.5, 4.6 rule 4, 6.1): the exact decision
 * for each way a call can go (ask_question, autoAllow, the connection's
 * approval policy with gatedTools and 'once' memory, the agent's hook and its
 * onHookError) and the settled interaction a review decided at once records,
 * against real storage and a real hook server. The tools are a
 * Toolset over an in-test tool family whose only job is to report a policy.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import type { ToolCall } from "../../../domain/Conversation.ts"
import { type AgentId, HookId, InteractionId, type RunId, type ThreadId, ToolCallId } from "../../../domain/Ids.ts"
import { ToolApprovalHooks } from "../../../src/interactions/ToolApprovalHooks.ts"
import { type Gate, ToolGate } from "../../../src/runs/ToolGate.ts"
import { ApprovalMemory } from "../../../src/store/ApprovalMemory.ts"
import { InteractionRepo } from "../../../src/store/InteractionRepo.ts"
import { nowIso } from "../../../src/Time.ts"
import type { ToolFamily, ToolPolicyRef } from "../../../src/tools/ToolFamily.ts"
import * as ToolOutcome from "../../../src/tools/ToolOutcome.ts"
import * as Toolset from "../../../src/tools/Toolset.ts"
import { type Answer, hold, HookServer, reply, replyText } from "../../support/HookServer.ts"
import * as RunStage from "../../support/RunStage.ts"

/** The gated tool: `write` of the tool server `files`. */
const tool = "mcp__files__write"

type Policy = Omit<ToolPolicyRef, "originalName">

/** A tool family offering `tool` under `policy` (undefined: it reports none, as for a call no family claims). */
const family = (policy: Policy | undefined): ToolFamily => ({
  specs: [{ name: tool, description: "Writes a file.", inputSchema: { type: "object" } }],
  call: () => undefined,
  policyOf: (name) => (name === tool && policy !== undefined ? { ...policy, originalName: "write" } : undefined),
  untrusted: false,
  requiredSkillsOf: () => [],
  deferred: new Set()
})

const always: Policy = { approval: "always", gatedTools: null }
const once: Policy = { approval: "once", gatedTools: null }
const never: Policy = { approval: "never", gatedTools: null }
const unset: Policy = { approval: null, gatedTools: null }

const failed = reply(500, { oops: true })
const garbage = replyText(200, "not json at all")

type OnHookError = "deny" | "pause" | "fail-run"

/** What a case's expected gate may refer to: the hook it created and the id of the review it sent. */
interface Seen {
  readonly hookId: HookId
  readonly reviewId: InteractionId
  readonly hookUrl: string
}

interface GateCase {
  readonly name: string
  readonly call: { readonly name: string; readonly input: unknown }
  /** The tool's connection policy (undefined: none). */
  readonly policy?: Policy
  readonly userInteraction?: boolean
  readonly autoAllow?: ReadonlyArray<string>
  /** The agent's hook, its answer and onHookError. */
  readonly hook?: { readonly answer: Answer; readonly onHookError?: OnHookError; readonly enabled?: boolean }
  /** An approval remembered before the call: of this input, on the call's thread or another of the agent's. */
  readonly remembered?: { readonly input: unknown; readonly thread: "same" | "other" }
  readonly expected: (seen: Seen) => Gate
  /** Review requests the hook received for the call. */
  readonly reviews: number
  /** Messages the gate reported as hook failures. */
  readonly reported?: (seen: Seen) => ReadonlyArray<string>
  /** Whether the call's exact input is remembered for the thread afterwards. */
  readonly rememberedAfter?: boolean
  /** The settled interaction a review decided at once records (none for a pause: the park opens it). */
  readonly recorded?: (seen: Seen) => Recorded
}

/** What a settled review records, beyond the call's own fields. */
interface Recorded {
  readonly status: "resolved" | "cancelled"
  readonly decision: "allow" | "deny" | "cancel"
  readonly reason: string | null
  readonly resolution: Record<string, unknown>
}

const byHook = (decision: "allow" | "deny", reason: string | null = null) => (): Recorded => ({
  status: "resolved",
  decision,
  reason,
  resolution: { resolvedBy: "hook" }
})
const byHookError = (onHookError: "deny" | "fail-run", error: (seen: Seen) => string) => (seen: Seen): Recorded =>
  onHookError === "deny"
    ? {
      status: "resolved",
      decision: "deny",
      reason: hookFailedDenied,
      resolution: { resolvedBy: "onHookError", onHookError, error: error(seen) }
    }
    : {
      status: "cancelled",
      decision: "cancel",
      reason: null,
      resolution: { resolvedBy: "onHookError", onHookError, error: error(seen) }
    }

const write = (path: string) => ({ name: tool, input: { path } })

const question = {
  title: "Pick a color",
  questions: [{ id: "color", prompt: "Which color?", options: [{ id: "red", label: "Red" }], multiple: true }]
}

const hookFailedDenied = "The approval hook could not be reached, so the call was denied."
const answeredHttp500 = (seen: Seen) => `${seen.hookUrl} answered HTTP 500`

const cases: ReadonlyArray<GateCase> = [
  {
    name: "ask_question with valid input waits for the user, flags resolved",
    call: { name: "ask_question", input: question },
    userInteraction: true,
    hook: { answer: reply(200, { decision: "deny" }) },
    expected: () => ({
      _tag: "Question",
      request: {
        title: "Pick a color",
        questions: [{
          id: "color",
          prompt: "Which color?",
          options: [{ id: "red", label: "Red" }],
          multiple: true,
          multiline: false,
          allowOther: false
        }]
      }
    }),
    reviews: 0
  },
  {
    name: "ask_question with malformed input is an error result, not a question",
    call: { name: "ask_question", input: { title: "", questions: "which?" } },
    userInteraction: true,
    expected: () => ({
      _tag: "Invalid",
      outcome: ToolOutcome.failure(
        "invalid_tool_input",
        "Invalid input for ask_question: title: title must not be empty; questions: Expected array"
      )
    }),
    reviews: 0
  },
  {
    name: "ask_question without userInteraction is an ordinary call (no policy, no hook: runs)",
    call: { name: "ask_question", input: question },
    expected: () => ({ _tag: "Run" }),
    reviews: 0
  },
  {
    name: "autoAllow runs the call under 'always' without asking the hook",
    call: write("a.txt"),
    policy: always,
    autoAllow: [tool],
    hook: { answer: reply(200, { decision: "deny" }) },
    expected: () => ({ _tag: "Run" }),
    reviews: 0
  },
  {
    name: "policy 'never' waives review, even with a hook",
    call: write("a.txt"),
    policy: never,
    hook: { answer: reply(200, { decision: "deny" }) },
    expected: () => ({ _tag: "Run" }),
    reviews: 0
  },
  {
    name: "policy 'always' without a hook waits for a person",
    call: write("a.txt"),
    policy: always,
    expected: () => ({ _tag: "Approval", hookId: null, reason: null, remember: false }),
    reviews: 0
  },
  {
    name: "policy 'always' with the tool in gatedTools waits for a person",
    call: write("a.txt"),
    policy: { approval: "always", gatedTools: ["read", "write"] },
    expected: () => ({ _tag: "Approval", hookId: null, reason: null, remember: false }),
    reviews: 0
  },
  {
    name: "policy 'always' with the tool not in gatedTools waives review, even with a hook",
    call: write("a.txt"),
    policy: { approval: "always", gatedTools: ["read"] },
    hook: { answer: reply(200, { decision: "deny" }) },
    expected: () => ({ _tag: "Run" }),
    reviews: 0
  },
  {
    name: "policy 'once' without a hook waits for a person and asks to remember the approval",
    call: write("a.txt"),
    policy: once,
    expected: () => ({ _tag: "Approval", hookId: null, reason: null, remember: true }),
    reviews: 0
  },
  {
    name: "policy 'once' with the tool not in gatedTools waives review",
    call: write("a.txt"),
    policy: { approval: "once", gatedTools: ["read"] },
    expected: () => ({ _tag: "Run" }),
    reviews: 0
  },
  {
    name: "policy 'once' with this exact input remembered on the thread runs, without asking the hook",
    call: write("a.txt"),
    policy: once,
    hook: { answer: reply(200, { decision: "deny" }) },
    remembered: { input: { path: "a.txt" }, thread: "same" },
    expected: () => ({ _tag: "Run" }),
    reviews: 0,
    rememberedAfter: true
  },
  {
    name: "policy 'once' with another input remembered on the thread waits for a person",
    call: write("b.txt"),
    policy: once,
    remembered: { input: { path: "a.txt" }, thread: "same" },
    expected: () => ({ _tag: "Approval", hookId: null, reason: null, remember: true }),
    reviews: 0
  },
  {
    name: "policy 'once' with this input remembered on another thread waits for a person",
    call: write("a.txt"),
    policy: once,
    remembered: { input: { path: "a.txt" }, thread: "other" },
    expected: () => ({ _tag: "Approval", hookId: null, reason: null, remember: true }),
    reviews: 0
  },
  {
    name: "no approval on the connection and no hook: runs",
    call: write("a.txt"),
    policy: unset,
    expected: () => ({ _tag: "Run" }),
    reviews: 0
  },
  {
    name: "the hook allows: runs",
    call: write("a.txt"),
    policy: unset,
    hook: { answer: reply(200, { decision: "allow" }) },
    expected: () => ({ _tag: "Run" }),
    recorded: byHook("allow"),
    reviews: 1
  },
  {
    name: "a call no family claims (no policy) goes to the hook",
    call: { name: "load_skill", input: { name: "x" } },
    hook: { answer: reply(200, { decision: "deny", reason: "No skills today." }) },
    expected: () => ({ _tag: "Denied", reason: "No skills today." }),
    recorded: byHook("deny", "No skills today."),
    reviews: 1
  },
  {
    name: "the hook denies with a reason: denied with it verbatim",
    call: write("a.txt"),
    policy: always,
    hook: { answer: reply(200, { decision: "deny", reason: "Not on Fridays." }) },
    expected: () => ({ _tag: "Denied", reason: "Not on Fridays." }),
    recorded: byHook("deny", "Not on Fridays."),
    reviews: 1
  },
  {
    name: "the hook denies without a reason: denied, reason null",
    call: write("a.txt"),
    policy: unset,
    hook: { answer: reply(200, { decision: "deny" }) },
    expected: () => ({ _tag: "Denied", reason: null }),
    recorded: byHook("deny"),
    reviews: 1
  },
  {
    name: "the hook pauses: waits for a person on the interaction the hook saw, with its reason",
    call: write("a.txt"),
    policy: always,
    hook: { answer: reply(200, { decision: "pause", reason: "Needs a human." }) },
    expected: (seen) => ({
      _tag: "Approval",
      hookId: seen.hookId,
      reason: "Needs a human.",
      remember: false,
      interactionId: seen.reviewId
    }),
    reviews: 1
  },
  {
    name: "policy 'once' and the hook pauses: the approval is to be remembered",
    call: write("a.txt"),
    policy: once,
    hook: { answer: reply(200, { decision: "pause" }) },
    expected: (seen) => ({
      _tag: "Approval",
      hookId: seen.hookId,
      reason: null,
      remember: true,
      interactionId: seen.reviewId
    }),
    reviews: 1
  },
  {
    name: "policy 'once' and the hook allows: runs and the approval is remembered for the thread",
    call: write("a.txt"),
    policy: once,
    hook: { answer: reply(200, { decision: "allow" }) },
    expected: () => ({ _tag: "Run" }),
    recorded: byHook("allow"),
    reviews: 1,
    rememberedAfter: true
  },
  {
    name: "policy 'always' and the hook allows: runs, nothing remembered",
    call: write("a.txt"),
    policy: always,
    hook: { answer: reply(200, { decision: "allow" }) },
    expected: () => ({ _tag: "Run" }),
    recorded: byHook("allow"),
    reviews: 1
  },
  {
    name: "a failing hook (HTTP 500) under onHookError 'deny' (the default): denied, failure reported",
    call: write("a.txt"),
    policy: always,
    hook: { answer: failed },
    expected: () => ({ _tag: "Denied", reason: hookFailedDenied }),
    recorded: byHookError("deny", answeredHttp500),
    reviews: 1,
    reported: (seen) => [`Approval hook failed: ${answeredHttp500(seen)}`]
  },
  {
    name: "a failing hook under onHookError 'pause': waits for a person on the interaction the hook saw",
    call: write("a.txt"),
    policy: once,
    hook: { answer: failed, onHookError: "pause" },
    expected: (seen) => ({
      _tag: "Approval",
      hookId: seen.hookId,
      reason: null,
      remember: true,
      interactionId: seen.reviewId
    }),
    reviews: 1,
    reported: (seen) => [`Approval hook failed: ${answeredHttp500(seen)}`]
  },
  {
    name: "a failing hook under onHookError 'fail-run': the run fails with the hook's failure",
    call: write("a.txt"),
    policy: unset,
    hook: { answer: failed, onHookError: "fail-run" },
    expected: (seen) => ({ _tag: "FailRun", message: `The approval hook failed: ${answeredHttp500(seen)}` }),
    recorded: byHookError("fail-run", answeredHttp500),
    reviews: 1,
    reported: (seen) => [`Approval hook failed: ${answeredHttp500(seen)}`]
  },
  {
    name: "a hook answering something but a decision applies onHookError ('deny')",
    call: write("a.txt"),
    policy: always,
    hook: { answer: garbage, onHookError: "deny" },
    expected: () => ({ _tag: "Denied", reason: hookFailedDenied }),
    recorded: byHookError(
      "deny",
      () => "the hook answered HTTP 200 without a valid { decision: 'allow' | 'deny' | 'pause', reason? } body"
    ),
    reviews: 1,
    reported: () => [
      "Approval hook failed: the hook answered HTTP 200 without a valid { decision: 'allow' | 'deny' | 'pause', reason? } body"
    ]
  },
  {
    name: "a disabled hook is never called: the policy alone decides",
    call: write("a.txt"),
    policy: always,
    hook: { answer: reply(200, { decision: "allow" }), enabled: false },
    expected: () => ({ _tag: "Approval", hookId: null, reason: null, remember: false }),
    reviews: 0
  }
]

const Review = Schema.fromJsonString(Schema.Struct({ id: Schema.String }))
const decodeReview = Schema.decodeUnknownEffect(Review)

/** Creates the hook of a case, pointing at the hook server (answering as the case says). */
const makeHook = (options: { readonly onHookError?: OnHookError; readonly enabled?: boolean }) =>
  Effect.gen(function*() {
    const server = yield* HookServer
    const hooks = yield* ToolApprovalHooks
    const hookUrl = `${server.origin}/review`
    const hook = yield* Effect.orDie(hooks.create(RunStage.principal, {
      name: "reviewer",
      url: hookUrl,
      secret: "whsec_tool_gate_test",
      ...(options.onHookError === undefined ? {} : { onHookError: options.onHookError }),
      ...(options.enabled === undefined ? {} : { enabled: options.enabled })
    }))
    return { hookId: HookId.make(hook.id), hookUrl }
  })

/** The gate of a run on `threadId` with these tools, approvals and hook; reported hook failures are collected. */
const gateOf = (options: {
  readonly threadId: ThreadId
  readonly agentId: AgentId
  readonly runId?: RunId
  readonly policy: Policy | undefined
  readonly userInteraction?: boolean
  readonly autoAllow?: ReadonlyArray<string>
  readonly hookId?: HookId
}) =>
  Effect.gen(function*() {
    const reported: Array<string> = []
    const approvals = options.hookId === undefined && options.autoAllow === undefined ? null : {
      ...(options.hookId === undefined ? {} : { toolExecution: { hookId: options.hookId } }),
      ...(options.autoAllow === undefined ? {} : { autoAllow: options.autoAllow })
    }
    const userInteraction = options.userInteraction ?? false
    // A run of the thread: the reviews the gate records are its interactions.
    const runId = options.runId ??
      (yield* RunStage.stageRun({ threadId: options.threadId, agentId: options.agentId })).id
    const gate = yield* (yield* ToolGate).forRun({
      runId,
      threadId: options.threadId,
      agentId: options.agentId,
      principal: RunStage.principal,
      plan: RunStage.planWith({ approvals, userInteraction }),
      tools: Toolset.make({ families: [family(options.policy)], skills: [], userInteraction }),
      reportHookFailure: (message) => Effect.sync(() => reported.push(message))
    })
    return { gate, reported, runId }
  })

const callOf = (c: { readonly name: string; readonly input: unknown }): ToolCall => ({
  id: ToolCallId.make("call_1"),
  ...c
})

layer(Layer.mergeAll(RunStage.layer, HookServer.layer), { timeout: RunStage.setupTimeout })("ToolGate", (it) => {
  it.effect.each(cases)("$name", (c) =>
    Effect.gen(function*() {
      const server = yield* HookServer
      const memory = yield* ApprovalMemory
      const { agent, thread } = yield* RunStage.agentWithThread
      if (c.remembered !== undefined) {
        const where = c.remembered.thread === "same" ? thread.id : (yield* RunStage.threadOf(agent.id)).id
        yield* memory.remember(where, c.call.name, c.remembered.input, yield* nowIso)
      }
      const hook = c.hook === undefined ? undefined : yield* makeHook(c.hook)
      if (c.hook !== undefined) yield* server.answerWith(c.hook.answer)
      const before = (yield* server.received).length
      const { gate, reported, runId } = yield* gateOf({
        threadId: thread.id,
        agentId: agent.id,
        policy: c.policy,
        ...(c.userInteraction === undefined ? {} : { userInteraction: c.userInteraction }),
        ...(c.autoAllow === undefined ? {} : { autoAllow: c.autoAllow }),
        ...(hook === undefined ? {} : { hookId: hook.hookId })
      })

      const decision = yield* gate(callOf(c.call), 0)

      const reviews = (yield* server.received).slice(before)
      assert.strictEqual(reviews.length, c.reviews)
      const seen: Seen = {
        hookId: hook?.hookId ?? HookId.make(""),
        hookUrl: hook?.hookUrl ?? "",
        reviewId: InteractionId.make(
          reviews.length === 0 ? "" : (yield* Effect.orDie(decodeReview(reviews[0].body))).id
        )
      }
      assert.deepStrictEqual(decision, c.expected(seen))
      assert.deepStrictEqual(reported, c.reported?.(seen) ?? [])
      assert.strictEqual(yield* memory.has(thread.id, c.call.name, c.call.input), c.rememberedAfter ?? false)
      // The settled interaction of a review decided at once: the id the hook saw, the call, who decided.
      const records = (yield* (yield* InteractionRepo).ofRun(runId)).map((r) => r.interaction)
      assert.deepStrictEqual(
        records.map(({ id, kind, hookId, toolName, input, expiresAt, status, decision, reason, resolution }) => ({
          id,
          kind,
          hookId,
          toolName,
          input,
          expiresAt,
          recorded: { status, decision, reason, resolution }
        })),
        c.recorded === undefined ? [] : [{
          id: seen.reviewId,
          kind: "approval_request",
          hookId: seen.hookId,
          toolName: c.call.name,
          input: c.call.input,
          expiresAt: null,
          recorded: c.recorded(seen)
        }]
      )
    }))

  it.effect("the review request names the run, the thread, the agent, the 1-based step and the call", () =>
    Effect.gen(function*() {
      const server = yield* HookServer
      const { agent, thread } = yield* RunStage.agentWithThread
      const hook = yield* makeHook({})
      yield* server.answerWith(reply(200, { decision: "allow" }))
      const runId = (yield* RunStage.stageRun({ threadId: thread.id, agentId: agent.id })).id
      const { gate } = yield* gateOf({
        threadId: thread.id,
        agentId: agent.id,
        runId,
        policy: always,
        hookId: hook.hookId
      })
      const before = (yield* server.received).length
      assert.deepStrictEqual(
        yield* gate({ id: ToolCallId.make("call_7"), name: tool, input: { path: "notes.md" } }, 2),
        { _tag: "Run" }
      )
      const [review] = (yield* server.received).slice(before)
      assert.strictEqual(review.path, "/review")
      const { id } = yield* Effect.orDie(decodeReview(review.body))
      assert.match(id, /^tar_[0-9A-Za-z]{22}$/)
      const body = yield* Effect.orDie(Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Unknown))(review.body))
      assert.deepStrictEqual(body, {
        type: "tool_execution_review",
        id,
        runId,
        rootRunId: runId,
        threadId: thread.id,
        agentId: agent.id,
        stepNumber: 3,
        toolName: tool,
        toolCallId: "call_7",
        input: { path: "notes.md" },
        preview: { toolName: tool, summary: `${tool}({"path":"notes.md"})` },
        resolveUrl: `http://svc.test/v1/interactions/${id}/resolve`
      })
    }))

  it.effect("'once' approved by the hook: the same call on the thread runs unreviewed; another input or thread is reviewed again", () =>
    Effect.gen(function*() {
      const server = yield* HookServer
      const { agent, thread } = yield* RunStage.agentWithThread
      const other = yield* RunStage.threadOf(agent.id)
      const hook = yield* makeHook({})
      yield* server.answerWith(reply(200, { decision: "allow" }))
      const here = yield* gateOf({ threadId: thread.id, agentId: agent.id, policy: once, hookId: hook.hookId })
      const there = yield* gateOf({ threadId: other.id, agentId: agent.id, policy: once, hookId: hook.hookId })
      const before = (yield* server.received).length
      const input = { path: "a.txt", mode: "overwrite" }
      assert.deepStrictEqual(yield* here.gate({ id: ToolCallId.make("call_1"), name: tool, input }, 0), { _tag: "Run" })
      assert.strictEqual((yield* server.received).length, before + 1)
      // Remembered: no review; the input's key order does not matter.
      assert.deepStrictEqual(
        yield* here.gate({ id: ToolCallId.make("call_2"), name: tool, input: { mode: "overwrite", path: "a.txt" } }, 1),
        { _tag: "Run" }
      )
      assert.strictEqual((yield* server.received).length, before + 1)
      yield* server.answerWith(reply(200, { decision: "deny", reason: "No." }))
      assert.deepStrictEqual(
        yield* here.gate({ id: ToolCallId.make("call_3"), name: tool, input: { path: "b.txt", mode: "overwrite" } }, 1),
        { _tag: "Denied", reason: "No." }
      )
      assert.deepStrictEqual(yield* there.gate({ id: ToolCallId.make("call_1"), name: tool, input }, 0), {
        _tag: "Denied",
        reason: "No."
      })
      assert.strictEqual((yield* server.received).length, before + 3)
    }))

  it.effect("a hook slower than its requestTimeoutMs (TestClock) applies onHookError", () =>
    Effect.gen(function*() {
      const server = yield* HookServer
      const { agent, thread } = yield* RunStage.agentWithThread
      const hooks = yield* ToolApprovalHooks
      const hook = yield* Effect.orDie(hooks.create(RunStage.principal, {
        name: "slow",
        url: `${server.origin}/review`,
        secret: "whsec_tool_gate_test",
        onHookError: "fail-run",
        requestTimeoutMs: 2_000
      }))
      yield* server.answerWith(hold)
      const before = (yield* server.received).length
      const { gate, reported } = yield* gateOf({
        threadId: thread.id,
        agentId: agent.id,
        policy: always,
        hookId: HookId.make(hook.id)
      })
      const fiber = yield* Effect.forkChild(gate(callOf(write("a.txt")), 0))
      yield* server.awaitRequest(before + 1)
      yield* TestClock.adjust("1999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const decision = yield* Fiber.join(fiber)
      yield* server.releaseHeld
      assert.deepStrictEqual(decision, {
        _tag: "FailRun",
        message: "The approval hook failed: no response within 2000 ms"
      })
      assert.deepStrictEqual(reported, ["Approval hook failed: no response within 2000 ms"])
    }))
})

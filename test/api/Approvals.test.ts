/**
 * Approvals (spec 2.1.5, 3.1, 4.4, 4.6 rule 4, 6.1), against a real MCP
 * server and a real hook server that verifies every delivery with `stripe`:
 * autoAllow, the hook's allow / deny / pause (every review an interaction),
 * onHookError, the connection's
 * approval policy (always, never, gatedTools, once remembered per thread),
 * a disabled hook, approving by plain text.
 */
import { assert } from "@effect/vitest"
import type { UIMessageChunk } from "ai"
import { Clock, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import Stripe from "stripe"
import { BatchResolveResult, Interaction } from "../../domain/Interaction.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, callIdsOf, getRun, send, streamOf, textOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import { hold, HookServer, reply, replyText } from "../support/HookServer.ts"
import { interactions, pendingOf } from "../support/Interactions.ts"
import * as TestServer from "../support/TestServer.ts"

const stripe = new Stripe("sk_test_unused")

/** A stream's denial chunks, in order: the reason (`data-svc-tool-denied`) and `tool-output-denied`. */
const deniedChunks = (chunks: ReadonlyArray<UIMessageChunk>): ReadonlyArray<unknown> =>
  chunks.filter((c) => c.type === "data-svc-tool-denied" || c.type === "tool-output-denied")
const hookSecret = "whsec_approvals_test"

/** Registers a gate MCP server under `name` with the given policy, and an agent using it (and the hook). */
const setup = (name: string, policy: Record<string, unknown>, agentExtra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const server = yield* Collection.toolServers.create({ name, transport: "http", url: gate.url, ...policy })
    const { agent, thread } = yield* agentWithThread({
      capabilities: { mcp: { toolServerIds: [server.id] } },
      ...agentExtra
    })
    return { gate, server, agent, thread }
  })

const hookFor = (origin: string, extra: Record<string, unknown> = {}) =>
  Collection.toolApprovalHooks.create({ name: "reviewer", url: `${origin}/review`, secret: hookSecret, ...extra })

const echo = (server: string, text: string) => `/tool mcp__${server}__echo ${JSON.stringify({ text })}`
/** The scripted model's answer after the echo tool: the result it read (the untrusted envelope left out of the answer). */
const echoed = (text: string) => `Result: ${text}`

const Harness = Layer.mergeAll(TestServer.layer(), HookServer.layer)

TestServer.suiteWith(Harness)("approvals", (it) => {
  it.effect("the hook allows: a signed tool_execution_review (verified by stripe) with the 6.1 body, then the tool runs", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      const hook = yield* hookFor(hooks.origin)
      const { thread, agent } = yield* setup("allowed", {}, { approvals: { toolExecution: { hookId: hook.id } } })
      yield* hooks.answerWith(reply(200, { decision: "allow" }))
      const before = (yield* hooks.received).length
      const { runId, parsed } = yield* send(thread.id, echo("allowed", "hi"))
      assert.strictEqual(textOf(parsed.message), echoed("hi"))
      const delivery = (yield* hooks.received)[before]
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const signature = String(delivery.headers["svc-signature"])
      stripe.webhooks.constructEvent(delivery.body, signature, hookSecret, 300, undefined, now)
      assert.strictEqual(delivery.headers["svc-timestamp"], signature.slice(2, signature.indexOf(",")))
      assert.match(String(delivery.headers["svc-request-id"]), /^req_/)
      const body = JSON.parse(delivery.body) as Record<string, unknown>
      assert.match(String(body["id"]), /^tar_/)
      assert.deepStrictEqual(body, {
        type: "tool_execution_review",
        id: body["id"],
        runId,
        rootRunId: runId,
        threadId: thread.id,
        agentId: agent.id,
        stepNumber: 1,
        toolName: "mcp__allowed__echo",
        toolCallId: callIdsOf(parsed.chunks)[0],
        input: { text: "hi" },
        preview: body["preview"],
        resolveUrl: `http://svc.test/v1/interactions/${String(body["id"])}/resolve`
      })
      assert.strictEqual((yield* getRun(runId)).status, "completed")
    }).pipe(Effect.scoped))

  it.effect("autoAllow: the tool runs without review and the hook is never called", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      const hook = yield* hookFor(hooks.origin)
      const { thread } = yield* setup("trusted", { approval: "always" }, {
        approvals: { toolExecution: { hookId: hook.id }, autoAllow: ["mcp__trusted__echo"] }
      })
      const before = (yield* hooks.received).length
      const { parsed } = yield* send(thread.id, echo("trusted", "free"))
      assert.strictEqual(textOf(parsed.message), echoed("free"))
      assert.strictEqual((yield* hooks.received).length, before)
    }).pipe(Effect.scoped))

  it.effect("the hook denies: data-svc-tool-denied with the reason, then tool-output-denied; the model reads the reason verbatim, the tool never runs", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      const hook = yield* hookFor(hooks.origin)
      const { thread } = yield* setup("denied", {}, { approvals: { toolExecution: { hookId: hook.id } } })
      yield* hooks.answerWith(reply(200, { decision: "deny", reason: "Not on Fridays." }))
      const { parsed } = yield* send(thread.id, echo("denied", "x"))
      const [callId] = callIdsOf(parsed.chunks)
      const denial = { toolCallId: callId, toolName: "mcp__denied__echo", reason: "Not on Fridays." }
      assert.deepStrictEqual(deniedChunks(parsed.chunks), [
        { type: "data-svc-tool-denied", data: denial },
        { type: "tool-output-denied", toolCallId: callId }
      ])
      // Folded by the ai package: the call is output-denied, the reason a data part beside it.
      assert.deepInclude(parsed.message?.parts.find((p) => "toolCallId" in p && p.toolCallId === callId), {
        state: "output-denied"
      })
      assert.deepStrictEqual(
        parsed.message?.parts.flatMap((p) => (p.type === "data-svc-tool-denied" && "data" in p ? [p.data] : [])),
        [denial]
      )
      assert.strictEqual(textOf(parsed.message), "Result: Not on Fridays.")
      // The tool never ran: no output for the call.
      assert.isFalse(parsed.chunks.some((c) => c.type === "tool-output-available" || c.type === "tool-output-error"))
    }).pipe(Effect.scoped))

  it.effect("the hook pauses: waiting_for_approval with an approval_request; approving runs the tool, denying does not", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const hooks = yield* HookServer
      const hook = yield* hookFor(hooks.origin)
      const { thread } = yield* setup("paused", {}, { approvals: { toolExecution: { hookId: hook.id } } })
      yield* hooks.answerWith(reply(200, { decision: "pause", reason: "Needs a human." }))
      const first = yield* send(thread.id, echo("paused", "one"))
      assert.deepStrictEqual(first.parsed.chunks.at(-1), { type: "finish", finishReason: "other" })
      const requested = first.parsed.chunks.find((c) => c.type === "data-svc-input-requested")
      assert.isDefined(requested)
      const [pending] = yield* pendingOf(first.runId)
      assert.strictEqual(pending.kind, "approval_request")
      assert.strictEqual(pending.hookId, hook.id)
      assert.strictEqual(pending.reason, "Needs a human.")
      assert.deepStrictEqual(pending.input, { text: "one" })
      assert.deepStrictEqual(callIdsOf(first.parsed.chunks), [pending.toolCallId])
      assert.strictEqual(pending.request, null)
      assert.strictEqual((yield* getRun(first.runId)).status, "waiting_for_approval")
      // requestId must be the interaction's own id; optionId approve or deny.
      yield* TestServer.expectError(
        yield* api.request("POST", `/v1/interactions/${pending.id}/resolve`, {
          body: { inputResponses: [{ requestId: "x", optionId: "approve" }] }
        }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      yield* TestServer.expectError(
        yield* api.request("POST", `/v1/interactions/${pending.id}/resolve`, {
          body: { inputResponses: [{ requestId: pending.id, optionId: "maybe" }] }
        }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      const approved = yield* TestServer.expectOk(
        yield* api.request("POST", `/v1/interactions/${pending.id}/resolve`, {
          body: { inputResponses: [{ requestId: pending.id, optionId: "approve" }], reason: "ok by me" }
        }),
        200,
        Interaction
      )
      assert.strictEqual(approved.decision, "allow")
      assert.strictEqual(approved.reason, "ok by me")
      const resumed = yield* streamOf(first.runId)
      assert.strictEqual(textOf(resumed.message), echoed("one"))
      assert.strictEqual((yield* getRun(first.runId)).status, "completed")

      const second = yield* send(thread.id, echo("paused", "two"))
      const [again] = yield* pendingOf(second.runId)
      const rejected = yield* TestServer.expectOk(
        yield* api.request("POST", `/v1/interactions/${again.id}/resolve`, {
          body: { inputResponses: [{ requestId: again.id, optionId: "deny" }], reason: "Too risky." }
        }),
        200,
        Interaction
      )
      assert.strictEqual(rejected.decision, "deny")
      const after = yield* streamOf(second.runId)
      assert.deepStrictEqual(deniedChunks(after.chunks), [
        {
          type: "data-svc-tool-denied",
          data: { toolCallId: again.toolCallId, toolName: "mcp__paused__echo", reason: "Too risky." }
        },
        { type: "tool-output-denied", toolCallId: again.toolCallId }
      ])
      assert.deepStrictEqual(callIdsOf(after.chunks), [again.toolCallId])
      assert.strictEqual(textOf(after.message), "Result: Too risky.")
    }).pipe(Effect.scoped))

  it.effect("onHookError: a failing hook denies (default), pauses, or fails the run", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      yield* hooks.answerWith(reply(500, { oops: true }))
      const deny = yield* hookFor(hooks.origin)
      const a = yield* setup("hookerr1", {}, { approvals: { toolExecution: { hookId: deny.id } } })
      const denied = yield* send(a.thread.id, echo("hookerr1", "x"))
      assert.deepStrictEqual(deniedChunks(denied.parsed.chunks), [
        {
          type: "data-svc-tool-denied",
          data: {
            toolCallId: callIdsOf(denied.parsed.chunks)[0],
            toolName: "mcp__hookerr1__echo",
            reason: "The approval hook could not be reached, so the call was denied."
          }
        },
        { type: "tool-output-denied", toolCallId: callIdsOf(denied.parsed.chunks)[0] }
      ])
      assert.strictEqual((yield* getRun(denied.runId)).status, "completed")

      const pause = yield* hookFor(hooks.origin, { onHookError: "pause" })
      const b = yield* setup("hookerr2", {}, { approvals: { toolExecution: { hookId: pause.id } } })
      const paused = yield* send(b.thread.id, echo("hookerr2", "x"))
      assert.strictEqual((yield* getRun(paused.runId)).status, "waiting_for_approval")

      const fail = yield* hookFor(hooks.origin, { onHookError: "fail-run" })
      const c = yield* setup("hookerr3", {}, { approvals: { toolExecution: { hookId: fail.id } } })
      const failed = yield* send(c.thread.id, echo("hookerr3", "x"))
      const run = yield* getRun(failed.runId)
      assert.strictEqual(run.status, "failed")
      assert.strictEqual(run.error?.code, "approval_hook_failed")
      assert.deepStrictEqual(failed.parsed.chunks.at(-1), { type: "finish", finishReason: "error" })
    }).pipe(Effect.scoped))

  it.effect("every reviewed call is an interaction: the hook's allow and deny and onHookError's deny and fail-run are recorded settled, listed, and answer a resolve like any settled interaction", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const hooks = yield* HookServer
      const hook = yield* hookFor(hooks.origin)
      const { thread, agent } = yield* setup("audited", {}, { approvals: { toolExecution: { hookId: hook.id } } })
      /** Sends the echo call; the interaction the hook's request named (200 on GET), with the run's id and call id. */
      const reviewed = (text: string) =>
        Effect.gen(function*() {
          const before = (yield* hooks.received).length
          const { runId, parsed } = yield* send(thread.id, echo("audited", text))
          const id = String((JSON.parse((yield* hooks.received)[before].body) as Record<string, unknown>)["id"])
          const record = yield* TestServer.expectOk(
            yield* api.request("GET", `/v1/interactions/${id}`),
            200,
            Interaction
          )
          return { runId, toolCallId: callIdsOf(parsed.chunks)[0], record }
        })
      const resolve = (id: string, body: Record<string, unknown>) =>
        api.request("POST", `/v1/interactions/${id}/resolve`, { body })
      const choose = (id: string, optionId: string) => ({ inputResponses: [{ requestId: id, optionId }] })

      yield* hooks.answerWith(reply(200, { decision: "allow" }))
      const allowed = yield* reviewed("a")
      const { id, createdAt } = allowed.record
      assert.match(id, /^tar_/)
      assert.deepStrictEqual<unknown>(allowed.record, {
        id,
        object: "interaction",
        runId: allowed.runId,
        rootRunId: allowed.runId,
        workerRef: null,
        threadId: thread.id,
        agentId: agent.id,
        kind: "approval_request",
        status: "resolved",
        stepNumber: 1,
        toolName: "mcp__audited__echo",
        toolCallId: allowed.toolCallId,
        hookId: hook.id,
        input: { text: "a" },
        preview: allowed.record.preview,
        decision: "allow",
        reason: null,
        request: null,
        resolution: { resolvedBy: "hook" },
        expiresAt: null,
        createdAt,
        resolvedAt: createdAt,
        updatedAt: createdAt
      })
      // Listed with the run's interactions; never in an inbox of pending ones.
      assert.deepStrictEqual(yield* interactions(`runId=${allowed.runId}`), [allowed.record])
      assert.deepStrictEqual(yield* pendingOf(allowed.runId), [])
      // The same decision again is 200 and changes nothing; another outcome is 409 (single and batch).
      assert.deepStrictEqual(
        yield* TestServer.expectOk(yield* resolve(id, choose(id, "approve")), 200, Interaction),
        allowed.record
      )
      yield* TestServer.expectError(
        yield* resolve(id, choose(id, "deny")),
        409,
        "api_error",
        "idempotency_key_conflict"
      )
      yield* TestServer.expectError(yield* resolve(id, { cancel: true }), 409, "api_error", "idempotency_key_conflict")
      const batch = yield* TestServer.expectOk(
        yield* api.request("POST", `/v1/runs/${allowed.runId}/interactions/resolve`, {
          body: { items: [{ id, ...choose(id, "approve") }, { id, ...choose(id, "deny") }] }
        }),
        200,
        BatchResolveResult
      )
      assert.deepStrictEqual(batch.items, [{ id, status: "already_resolved" }, { id, status: "conflict" }])

      yield* hooks.answerWith(reply(200, { decision: "deny", reason: "Not on Fridays." }))
      const denied = yield* reviewed("b")
      assert.deepInclude(denied.record, {
        status: "resolved",
        decision: "deny",
        reason: "Not on Fridays.",
        resolution: { resolvedBy: "hook" }
      })
      const deniedId = denied.record.id
      yield* TestServer.expectOk(yield* resolve(deniedId, choose(deniedId, "deny")), 200, Interaction)
      yield* TestServer.expectError(
        yield* resolve(deniedId, choose(deniedId, "approve")),
        409,
        "api_error",
        "idempotency_key_conflict"
      )

      // The hook failing: onHookError decided, and the record says so with the failure.
      yield* hooks.answerWith(reply(500, { oops: true }))
      const failedDeny = yield* reviewed("c")
      assert.deepInclude(failedDeny.record, {
        status: "resolved",
        decision: "deny",
        reason: "The approval hook could not be reached, so the call was denied."
      })
      assert.deepInclude(failedDeny.record.resolution, { resolvedBy: "onHookError", onHookError: "deny" })
      assert.match(String(failedDeny.record.resolution?.["error"]), /500/)
      yield* Collection.toolApprovalHooks.update(hook.id, { onHookError: "fail-run" })
      const failedRun = yield* reviewed("d")
      assert.strictEqual((yield* getRun(failedRun.runId)).error?.code, "approval_hook_failed")
      assert.deepInclude(failedRun.record, { status: "cancelled", decision: "cancel", reason: null })
      assert.deepInclude(failedRun.record.resolution, { resolvedBy: "onHookError", onHookError: "fail-run" })
      const failedId = failedRun.record.id
      yield* TestServer.expectOk(yield* resolve(failedId, { cancel: true }), 200, Interaction)
      yield* TestServer.expectError(
        yield* resolve(failedId, choose(failedId, "approve")),
        409,
        "api_error",
        "idempotency_key_conflict"
      )
      yield* hooks.answerWith(reply(200, { decision: "allow" }))
    }).pipe(Effect.scoped))

  it.effect("a garbage answer and a hook too slow for requestTimeoutMs (TestClock) both apply onHookError", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      yield* hooks.answerWith(replyText(200, "not json at all"))
      const garbage = yield* hookFor(hooks.origin)
      const a = yield* setup("garbage1", {}, { approvals: { toolExecution: { hookId: garbage.id } } })
      const denied = yield* send(a.thread.id, echo("garbage1", "x"))
      assert.isTrue(denied.parsed.chunks.some((c) => c.type === "tool-output-denied"))
      assert.isTrue(denied.parsed.errors.some((e) => e.startsWith("Approval hook failed")))

      yield* hooks.answerWith(hold)
      const slow = yield* hookFor(hooks.origin, { requestTimeoutMs: 5000, onHookError: "pause" })
      const b = yield* setup("slow1", {}, { approvals: { toolExecution: { hookId: slow.id } } })
      const before = (yield* hooks.received).length
      const started = yield* Effect.forkChild(send(b.thread.id, echo("slow1", "y")))
      yield* hooks.awaitRequest(before + 1)
      yield* TestClock.adjust("5 seconds")
      const parked = yield* Fiber.join(started)
      assert.strictEqual((yield* getRun(parked.runId)).status, "waiting_for_approval")
      yield* hooks.releaseHeld
      yield* hooks.answerWith(reply(200, { decision: "allow" }))
    }).pipe(Effect.scoped))

  it.effect("cancelling a run parked on an approval gives the interaction decision 'cancel' and expiresAt null", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* setup("cancelme", { approval: "always" })
      const parked = yield* send(thread.id, echo("cancelme", "c"))
      const [pending] = yield* pendingOf(parked.runId)
      yield* api.request("POST", `/v1/runs/${parked.runId}/cancel`)
      const after = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/interactions/${pending.id}`),
        200,
        Interaction
      )
      assert.strictEqual(after.status, "cancelled")
      assert.strictEqual(after.decision, "cancel")
      assert.strictEqual(after.expiresAt, null)
    }).pipe(Effect.scoped))

  it.effect("resolving after the run's cancel cancelled the approval: 200, the answer is recorded, the run stays cancelled (single and batch)", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* setup("late1", { approval: "always" })
      const approve = (id: string) => ({ inputResponses: [{ requestId: id, optionId: "approve" }] })
      const deny = (id: string) => ({ inputResponses: [{ requestId: id, optionId: "deny" }] })

      const parked = yield* send(thread.id, echo("late1", "late"))
      const [pending] = yield* pendingOf(parked.runId)
      yield* api.request("POST", `/v1/runs/${parked.runId}/cancel`)
      const late = yield* TestServer.expectOk(
        yield* api.request("POST", `/v1/interactions/${pending.id}/resolve`, {
          body: { ...approve(pending.id), reason: "too late?" }
        }),
        200,
        Interaction
      )
      assert.strictEqual(late.status, "resolved")
      assert.strictEqual(late.decision, "allow")
      assert.strictEqual(late.reason, "too late?")
      assert.deepStrictEqual(late.resolution, { ...approve(pending.id), reason: "too late?" })
      assert.strictEqual(late.expiresAt, null)
      assert.isNotNull(late.resolvedAt)
      const run = yield* getRun(parked.runId)
      assert.strictEqual(run.status, "cancelled")
      assert.isFalse((yield* streamOf(parked.runId)).chunks.some((c) => c.type === "tool-output-available"))
      // Now a client settled it: the same answer is 200, another one 409.
      const same = yield* api.request("POST", `/v1/interactions/${pending.id}/resolve`, {
        body: { ...approve(pending.id), reason: "too late?" }
      })
      assert.strictEqual(same.status, 200)
      yield* TestServer.expectError(
        yield* api.request("POST", `/v1/interactions/${pending.id}/resolve`, { body: deny(pending.id) }),
        409,
        "api_error",
        "idempotency_key_conflict"
      )

      const batched = yield* send(thread.id, echo("late1", "batch"))
      const [other] = yield* pendingOf(batched.runId)
      yield* api.request("POST", `/v1/threads/${thread.id}/cancel`)
      const reply = yield* api.request("POST", `/v1/runs/${batched.runId}/interactions/resolve`, {
        body: { items: [{ id: other.id, ...deny(other.id) }] }
      })
      assert.deepStrictEqual(reply.json, { items: [{ id: other.id, status: "resolved" }] })
      const recorded = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/interactions/${other.id}`),
        200,
        Interaction
      )
      assert.strictEqual(recorded.status, "resolved")
      assert.strictEqual(recorded.decision, "deny")
      assert.strictEqual((yield* getRun(batched.runId)).status, "cancelled")
      const again = yield* api.request("POST", `/v1/runs/${batched.runId}/interactions/resolve`, {
        body: { items: [{ id: other.id, ...deny(other.id) }, { id: other.id, ...approve(other.id) }] }
      })
      assert.deepStrictEqual(again.json, {
        items: [{ id: other.id, status: "already_resolved" }, { id: other.id, status: "conflict" }]
      })

      // A client's cancel: true is a client settlement: a different answer afterwards stays 409.
      const dismissed = yield* send(thread.id, echo("late1", "dismissed"))
      const [third] = yield* pendingOf(dismissed.runId)
      const cancelled = yield* TestServer.expectOk(
        yield* api.request("POST", `/v1/interactions/${third.id}/resolve`, { body: { cancel: true } }),
        200,
        Interaction
      )
      assert.strictEqual(cancelled.status, "cancelled")
      assert.strictEqual(cancelled.decision, "cancel")
      yield* streamOf(dismissed.runId)
      yield* TestServer.expectError(
        yield* api.request("POST", `/v1/interactions/${third.id}/resolve`, { body: approve(third.id) }),
        409,
        "api_error",
        "idempotency_key_conflict"
      )
    }).pipe(Effect.scoped))

  it.effect("connection policy without a hook: always parks; never and ungated tools run; once is remembered per thread for the exact input", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const always = yield* setup("always1", { approval: "always" })
      const parked = yield* send(always.thread.id, echo("always1", "x"))
      const [pending] = yield* pendingOf(parked.runId)
      assert.strictEqual(pending.hookId, null)
      assert.strictEqual((yield* getRun(parked.runId)).status, "waiting_for_approval")

      const never = yield* setup("never1", { approval: "never" })
      assert.strictEqual(
        textOf((yield* send(never.thread.id, echo("never1", "n"))).parsed.message),
        echoed("n")
      )

      const gated = yield* setup("gated1", { approval: "always", gatedTools: ["fail"] })
      assert.strictEqual(
        textOf((yield* send(gated.thread.id, echo("gated1", "g"))).parsed.message),
        echoed("g")
      )
      const gatedFail = yield* send(gated.thread.id, "/tool mcp__gated1__fail {}")
      assert.strictEqual((yield* getRun(gatedFail.runId)).status, "waiting_for_approval")

      const once = yield* setup("once1", { approval: "once" })
      const firstOnce = yield* send(once.thread.id, echo("once1", "same"))
      const [ask] = yield* pendingOf(firstOnce.runId)
      yield* api.request("POST", `/v1/interactions/${ask.id}/resolve`, {
        body: { inputResponses: [{ requestId: ask.id, optionId: "approve" }] }
      })
      yield* streamOf(firstOnce.runId)
      const remembered = yield* send(once.thread.id, echo("once1", "same"))
      assert.strictEqual(textOf(remembered.parsed.message), echoed("same"))
      assert.strictEqual((yield* getRun(remembered.runId)).status, "completed")
      const other = yield* send(once.thread.id, echo("once1", "different"))
      assert.strictEqual((yield* getRun(other.runId)).status, "waiting_for_approval")
    }).pipe(Effect.scoped))

  it.effect("a disabled hook is never called: the policy alone decides", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      const hook = yield* hookFor(hooks.origin, { enabled: false })
      const before = (yield* hooks.received).length
      const open = yield* setup("offhook1", {}, { approvals: { toolExecution: { hookId: hook.id } } })
      assert.strictEqual(
        textOf((yield* send(open.thread.id, echo("offhook1", "o"))).parsed.message),
        echoed("o")
      )
      const gated = yield* setup("offhook2", { approval: "always" }, {
        approvals: { toolExecution: { hookId: hook.id } }
      })
      const parked = yield* send(gated.thread.id, echo("offhook2", "p"))
      assert.strictEqual((yield* getRun(parked.runId)).status, "waiting_for_approval")
      assert.strictEqual((yield* hooks.received).length, before)
    }).pipe(Effect.scoped))

  it.effect("plain text answers a lone pending approval: 'yes' approves, with 409 thread_busy and resolved_interaction_id", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const { thread } = yield* setup("texty", { approval: "always" })
      const parked = yield* send(thread.id, echo("texty", "t"))
      const [pending] = yield* pendingOf(parked.runId)
      const reply = yield* api.request("POST", `/v1/threads/${thread.id}/messages`, {
        body: { input: "yes" },
        headers: { accept: "application/json" }
      })
      const busy = yield* TestServer.expectError(reply, 409, "api_error", "thread_busy")
      assert.deepStrictEqual(busy.details, { active_run_id: parked.runId, resolved_interaction_id: pending.id })
      const resumed = yield* streamOf(parked.runId)
      assert.strictEqual(textOf(resumed.message), echoed("t"))
    }).pipe(Effect.scoped))

  it.effect("every delivery this suite's hook server received carries a valid Stripe-compatible signature", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      const received = yield* hooks.received
      assert.strictEqual(received.length, 13)
      for (const delivery of received) {
        const signature = String(delivery.headers["svc-signature"])
        const t = Number(signature.slice(2, signature.indexOf(",")))
        // Verified against the delivery's own timestamp: the signature, not the clock, is what this checks.
        stripe.webhooks.constructEvent(delivery.body, signature, hookSecret, 300, undefined, t)
        assert.strictEqual(delivery.headers["content-type"], "application/json")
        assert.match(String(delivery.headers["svc-request-id"]), /^req_/)
      }
    }))
})

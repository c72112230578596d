/**
 * Progress snapshots (spec 4.3 rule 2, 6.2) through the API, on TestClock:
 * with `streamProgress`, `data-svc-progress` says what the run does and what
 * it waits on: tool calls still running past 5 s (a summary every 5 s), an
 * approval hook still reviewing a call, the delegated tasks a step waits on;
 * a pause says nothing more (its request clears the snapshot). Streams are
 * parsed by the `ai` package.
 */
import { assert } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Chunk } from "../../domain/Chunk.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, startRun, streamOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import { hold, HookServer, reply } from "../support/HookServer.ts"
import { delegate } from "../support/Subagents.ts"
import * as TestServer from "../support/TestServer.ts"
import { frames } from "../support/UiStream.ts"

const decodeChunk = Schema.decodeUnknownSync(Schema.fromJsonString(Chunk))

/**
 * The progress snapshots of a stream as sent, in order (read from its frames: the `ai` package's fold
 * replaces a data part in place, and may update the chunk objects it was given with it).
 */
const progressOf = (stream: { readonly reply: { readonly text: string } }) =>
  frames(stream.reply.text).flatMap((f) => {
    if (f.data === "[DONE]") return []
    const chunk = decodeChunk(f.data)
    return chunk.type === "data-svc-progress" ? [chunk.data] : []
  })

const activity = (text: string) => ({ kind: "activity", summaryAvailable: false, text })
const summary = (text: string) => ({ kind: "summary", summaryAvailable: true, text })

/** A gate MCP server registered as `name`, and an agent with a thread using it. */
const gatedAgent = (name: string, agent: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const server = yield* Collection.toolServers.create({ name, transport: "http", url: gate.url })
    const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } }, ...agent })
    return { gate, thread }
  })

const Harness = Layer.mergeAll(TestServer.layer(), HookServer.layer)

TestServer.suiteWith(Harness)("run progress", (it) => {
  it.effect("tool calls still running after 5 s are summed up every 5 s of the run's clock, between the calls and their results", () =>
    Effect.gen(function*() {
      const { gate, thread } = yield* gatedAgent("slow")
      const wait = { name: "mcp__slow__wait", input: {} }
      const receipt = yield* startRun(thread.id, {
        input: `/tools ${JSON.stringify([wait, wait])}\n/text done`,
        streamProgress: true
      })
      yield* gate.waiting
      // Nothing is said before 5 s (a snapshot at 4 s would say so), then every 5 s.
      yield* TestClock.adjust("4 seconds")
      yield* TestClock.adjust("1 second")
      yield* TestClock.adjust("5 seconds")
      yield* gate.open
      const stream = yield* streamOf(receipt.runId)
      const { chunks } = stream
      const waiting = "Tool calls: 0 of 2 done; waiting on mcp__slow__wait, mcp__slow__wait"
      assert.deepStrictEqual(progressOf(stream), [
        activity("Thinking"),
        activity("Working: mcp__slow__wait, mcp__slow__wait"),
        summary(`${waiting} (5 s)`),
        summary(`${waiting} (10 s)`),
        activity("Thinking")
      ])
      // Said while the calls ran: after their inputs, before their results.
      const types = chunks.map((c) => c.type)
      const summaries = types.flatMap((t, i) => (t === "data-svc-progress" ? [i] : [])).slice(2, 4)
      assert.isBelow(types.lastIndexOf("tool-input-available"), summaries[0])
      assert.isAbove(types.indexOf("tool-output-available"), summaries[1])
      // One part under one id, replaced in place.
      assert.deepStrictEqual(
        [...new Set(chunks.flatMap((c) => (c.type === "data-svc-progress" && "id" in c ? [c.id] : [])))],
        [`progress_${receipt.runId}`]
      )
    }).pipe(Effect.scoped))

  it.effect("without streamProgress a long wait says nothing", () =>
    Effect.gen(function*() {
      const { gate, thread } = yield* gatedAgent("quiet")
      const receipt = yield* startRun(thread.id, { input: "/tool mcp__quiet__wait {}\n/text done" })
      yield* gate.waiting
      yield* TestClock.adjust("10 seconds")
      yield* gate.open
      assert.deepStrictEqual(progressOf(yield* streamOf(receipt.runId)), [])
    }).pipe(Effect.scoped))

  it.effect("an approval hook still reviewing a call after 5 s is said (activity); a pause then says nothing more", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "slow-reviewer",
        url: `${hooks.origin}/review`,
        secret: "whsec_progress_signing_secret"
      })
      const { thread } = yield* gatedAgent("reviewed", { approvals: { toolExecution: { hookId: hook.id } } })
      yield* hooks.answerWith(hold)
      const before = (yield* hooks.received).length
      const receipt = yield* startRun(thread.id, {
        input: `/tool mcp__reviewed__echo {"text":"x"}\n/text done`,
        streamProgress: true
      })
      yield* hooks.awaitRequest(before + 1)
      yield* TestClock.adjust("5 seconds")
      yield* hooks.releaseHeld
      assert.deepStrictEqual(progressOf(yield* streamOf(receipt.runId)), [
        activity("Thinking"),
        activity("Working: mcp__reviewed__echo"),
        activity("Waiting for the approval hook to review mcp__reviewed__echo (5 s)"),
        activity("Thinking")
      ])

      // A pause: its request says what the run waits on and clears the snapshot; nothing follows it.
      yield* hooks.answerWith(reply(200, { decision: "pause" }))
      const pausedReceipt = yield* startRun(thread.id, {
        input: `/tool mcp__reviewed__echo {"text":"y"}`,
        streamProgress: true
      })
      const paused = yield* streamOf(pausedReceipt.runId)
      const types = paused.chunks.map((c) => c.type)
      assert.deepStrictEqual(progressOf(paused), [
        activity("Thinking"),
        activity("Working: mcp__reviewed__echo")
      ])
      assert.deepStrictEqual(types.slice(types.indexOf("data-svc-input-requested")), [
        "data-svc-input-requested",
        "finish"
      ])
      yield* TestServer.request("POST", `/v1/runs/${pausedReceipt.runId}/cancel`)
      yield* hooks.answerWith(reply(200, { decision: "allow" }))
    }).pipe(Effect.scoped))

  it.effect("a step waiting on its workers sums up the delegated tasks (summary), after their data-svc-task chunks", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { subagents: true } })
      const tasks = delegate({ label: "alpha", prompt: "/text a" }, { label: "beta", prompt: "/text b" })
      const receipt = yield* startRun(thread.id, { input: `${tasks}\n/text done`, streamProgress: true })
      const stream = yield* streamOf(receipt.runId)
      const { chunks } = stream
      const waiting = summary("Waiting on 2 delegated tasks: alpha; beta")
      assert.deepStrictEqual(progressOf(stream), [
        activity("Thinking"),
        activity("Working: delegate_task, delegate_task"),
        waiting,
        activity("Thinking")
      ])
      const types = chunks.map((c) => c.type)
      // The third snapshot, the summary.
      const said = types.flatMap((t, n) => (t === "data-svc-progress" ? [n] : []))[2]
      assert.isBelow(types.lastIndexOf("data-svc-task"), said)
      // Said before the tasks' results come back.
      assert.isBelow(said, types.indexOf("tool-output-available"))
    }))
})

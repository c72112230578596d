/**
 * A thread's history (`GET /v1/threads/:id/messages`) against a real MCP
 * server: every turn as the AI SDK's `UIMessage`s that its own
 * `validateUIMessages` accepts and `convertToModelMessages` turns into model
 * messages (the user's attachment and text, the assistant's reasoning, tool
 * calls with their output, an expected failure and a denial), each assistant
 * message as `useChat` folded the run's stream; a run still going as far as it
 * is stored; pages oldest first with a cursor that holds while turns are
 * added; a foreign cursor refused, and `warm=1` still 204 (404 and 403 are in
 * the table of thread routes, Threads.test.ts).
 */
import { assert } from "@effect/vitest"
import { convertToModelMessages, type UIMessage, validateUIMessages } from "ai"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Interaction } from "../../domain/Interaction.ts"
import { Page } from "../../domain/Page.ts"
import { ThreadMessage } from "../../domain/ThreadMessage.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, callIdsOf, startRun, streamOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import { HookServer, reply } from "../support/HookServer.ts"
import { pendingOf } from "../support/Interactions.ts"
import { expectInvalid } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"
import * as Uploads from "../support/Uploads.ts"

const MessagePage = Page(ThreadMessage)

/** A page of the thread's messages (key a): 200, decoded. */
const messages = (threadId: string, query = "") =>
  Effect.flatMap(
    TestServer.request("GET", `/v1/threads/${threadId}/messages${query}`),
    (reply) => TestServer.expectOk(reply, 200, MessagePage)
  )

/** An agent whose thread has the gate MCP server twice: `<name>` runs its tools, `<name>held` asks first. */
const gatedThread = (name: string) =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const open = yield* Collection.toolServers.create({ name, transport: "http", url: gate.url })
    const held = yield* Collection.toolServers.create({
      name: `${name}held`,
      transport: "http",
      url: gate.url,
      approval: "always"
    })
    const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [open.id, held.id] } } })
    return { gate, thread }
  })

/** Starts a run and reads its stream to its end (or park); a second later, so turns are in order. */
const turn = (threadId: string, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const { runId } = yield* startRun(threadId, body)
    const stream = yield* streamOf(runId)
    yield* TestClock.adjust("1 second")
    return { runId, stream }
  })

/** As JSON travels: what `readUIMessageStream` left undefined is not there. */
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

/** The parts `useChat` folded from a run's stream, without the progress snapshots the history leaves out. */
const foldedParts = (message: UIMessage | undefined) =>
  json((message?.parts ?? []).filter((p) => p.type !== "data-svc-progress"))

/** A message's parts, less what the history adds to what `useChat` folded (a denied call's approval). */
const withoutApproval = (message: ThreadMessage | undefined) =>
  json((message?.parts ?? []).map((p) => {
    if (!("approval" in p)) return p
    const { approval: _approval, ...rest } = p
    return rest
  }))

const dataTypes = (message: ThreadMessage | undefined) =>
  (message?.parts ?? []).flatMap((p) => (p.type.startsWith("data-") ? [p.type] : []))

const withoutData = (message: ThreadMessage | undefined) =>
  (message?.parts ?? []).filter((p) => !p.type.startsWith("data-"))

TestServer.suiteWith(Layer.mergeAll(TestServer.layer(), HookServer.layer))("thread history", (it) => {
  it.effect("three turns read back as UIMessages: attachment, reasoning, tool output, an expected failure, a denial", () =>
    Effect.gen(function*() {
      const { thread } = yield* gatedThread("open")
      const file = yield* Uploads.upload({ filename: "notes.txt", type: "text/plain", data: "remember the milk" })
      const firstInput = "/reason weighing it\n/tool mcp__open__echo {\"text\":\"hi\"}"
      const first = yield* turn(thread.id, {
        input: { text: firstInput, attachments: [{ fileId: file.id }] },
        streamReasoning: true
      })
      const second = yield* turn(thread.id, { input: "/tool mcp__open__fail" })
      const third = yield* turn(thread.id, { input: "/tool mcp__openheld__echo {\"text\":\"secret\"}" })
      const [pending] = yield* pendingOf(third.runId)
      yield* TestServer.expectOk(
        yield* TestServer.request("POST", `/v1/interactions/${pending.id}/resolve`, {
          body: { inputResponses: [{ requestId: pending.id, optionId: "deny" }], reason: "Not now." }
        }),
        200,
        Interaction
      )
      const thirdStream = yield* streamOf(third.runId)

      const page = yield* messages(thread.id)
      assert.strictEqual(page.object, "list")
      assert.strictEqual(page.hasMore, false)
      assert.strictEqual(page.nextCursor, null)
      assert.strictEqual(page.limit, 20)
      const runs = [first.runId, second.runId, third.runId]
      const createdAt = [0, 1000, 2000].map((ms) => new Date(ms).toISOString())
      assert.deepStrictEqual(
        page.data.map((m) => [m.id, m.role, m.metadata]),
        runs.flatMap((runId, i) => [
          [`msg_${runId.slice(4)}`, "user", { runId, createdAt: createdAt[i] }],
          [runId, "assistant", { runId, createdAt: createdAt[i] }]
        ])
      )
      const [user1, assistant1, user2, assistant2, user3, assistant3] = page.data

      // The user's turn as useChat sends it: the attachment (the run's copy, readable with the key), then the text.
      const [filePart] = user1.parts
      assert.strictEqual(filePart.type, "file")
      const url = filePart.type === "file" ? filePart.url : ""
      assert.match(url, /^http:\/\/svc\.test\/v1\/artifacts\/art_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(user1.parts, [
        { type: "file", mediaType: "text/plain", filename: "notes.txt", url },
        { type: "text", text: firstInput }
      ])
      const copy = yield* Uploads.download(url.replace("http://svc.test", ""))
      assert.strictEqual(copy.status, 200)
      assert.strictEqual(new TextDecoder().decode(copy.bytes), "remember the milk")
      assert.deepStrictEqual(user2.parts, [{ type: "text", text: "/tool mcp__open__fail" }])
      assert.deepStrictEqual(user3.parts, [{ type: "text", text: "/tool mcp__openheld__echo {\"text\":\"secret\"}" }])

      // The assistant's turns: each what useChat folded from the run's stream.
      const [echoCall] = callIdsOf(first.stream.chunks)
      const reasoning = assistant1.parts[1]
      const reasoningId = reasoning.type === "reasoning" ? reasoning.id ?? "" : ""
      assert.match(reasoningId, /^rs_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(withoutData(assistant1), [
        { type: "step-start" },
        { type: "reasoning", id: reasoningId, text: "weighing it", state: "done" },
        {
          type: "tool-mcp__open__echo",
          toolCallId: echoCall,
          state: "output-available",
          input: { text: "hi" },
          output: [{ type: "text", text: "hi" }]
        },
        { type: "step-start" },
        {
          type: "text",
          text: "Result: hi",
          state: "done"
        }
      ])
      assert.deepStrictEqual(dataTypes(assistant1), ["data-svc-terminal", "data-svc-usage"])
      assert.deepStrictEqual(withoutData(assistant2).slice(0, 2), [
        { type: "step-start" },
        {
          type: "tool-mcp__open__fail",
          toolCallId: callIdsOf(second.stream.chunks)[0],
          state: "output-available",
          input: {},
          output: { type: "tool-output-error", error: { code: "tool_error", message: "it failed" } }
        }
      ])
      assert.deepStrictEqual(withoutData(assistant3), [
        { type: "step-start" },
        {
          type: "tool-mcp__openheld__echo",
          toolCallId: pending.toolCallId,
          state: "output-denied",
          input: { text: "secret" },
          approval: { id: pending.id, approved: false, reason: "Not now." }
        },
        // The parked step reopens to settle the call (its results stay with the call), then the answer's step.
        { type: "step-start" },
        { type: "step-start" },
        { type: "text", text: "Result: Not now.", state: "done" }
      ])
      assert.deepStrictEqual(dataTypes(assistant3), [
        "data-svc-input-requested",
        "data-svc-tool-denied",
        "data-svc-terminal",
        "data-svc-usage"
      ])
      assert.deepStrictEqual(withoutApproval(assistant1), foldedParts(first.stream.message))
      assert.deepStrictEqual(withoutApproval(assistant2), foldedParts(second.stream.message))
      // The resumed step announces the parked call again: useChat folds a second part for it (the first stays
      // input-available, a call without a result); the history keeps one part per call, where it was first.
      const live = thirdStream.message?.parts ?? []
      assert.deepStrictEqual(
        live.flatMap((p) => ("toolCallId" in p ? [[p.toolCallId, p.state]] : [])),
        [[pending.toolCallId, "input-available"], [pending.toolCallId, "output-denied"]]
      )

      // The AI SDK takes them as they are: validated, and converted for a model to continue from.
      const validated = yield* Effect.promise(() => validateUIMessages({ messages: json(page.data) }))
      assert.deepStrictEqual(json(validated), json(page.data))
      const model = yield* Effect.promise(() => convertToModelMessages(validated))
      assert.deepStrictEqual(model.map((m) => m.role), [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant"
      ])
      assert.deepStrictEqual(json(model[0].content), [
        { type: "file", mediaType: "text/plain", filename: "notes.txt", data: { type: "url", url } },
        { type: "text", text: firstInput }
      ])
      assert.deepStrictEqual(json(model[10].content), [{
        type: "tool-approval-response",
        approvalId: pending.id,
        approved: false,
        reason: "Not now."
      }, {
        type: "tool-result",
        toolCallId: pending.toolCallId,
        toolName: "mcp__openheld__echo",
        output: { type: "error-text", value: "Not now." }
      }])
    }).pipe(Effect.scoped))

  it.effect("a call the approval hook denied: its approval is the review the hook saw (GET /v1/interactions/:id)", () =>
    Effect.gen(function*() {
      const hooks = yield* HookServer
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "reviewer",
        url: `${hooks.origin}/review`,
        secret: "whsec_history_test"
      })
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "hooked", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({
        capabilities: { mcp: { toolServerIds: [server.id] } },
        approvals: { toolExecution: { hookId: hook.id } }
      })
      yield* hooks.answerWith(reply(200, { decision: "deny", reason: "Not on Fridays." }))
      const before = (yield* hooks.received).length
      const { runId, stream } = yield* turn(thread.id, { input: "/tool mcp__hooked__echo {\"text\":\"x\"}" })
      const review = String((JSON.parse((yield* hooks.received)[before].body) as Record<string, unknown>)["id"])
      assert.match(review, /^tar_/)
      const [, answer] = (yield* messages(thread.id)).data
      assert.strictEqual(answer.id, runId)
      assert.deepStrictEqual(withoutData(answer)[1], {
        type: "tool-mcp__hooked__echo",
        toolCallId: callIdsOf(stream.chunks)[0],
        state: "output-denied",
        input: { text: "x" },
        approval: { id: review, approved: false, reason: "Not on Fridays." }
      })
      const decided = yield* TestServer.expectOk(
        yield* TestServer.request("GET", `/v1/interactions/${review}`),
        200,
        Interaction
      )
      assert.strictEqual(decided.toolCallId, callIdsOf(stream.chunks)[0])
    }).pipe(Effect.scoped))

  it.effect("a run still going shows what is stored so far: the call it is blocked in", () =>
    Effect.gen(function*() {
      const { gate, thread } = yield* gatedThread("going")
      const { runId } = yield* startRun(thread.id, { input: "/tool mcp__going__wait" })
      yield* gate.waiting
      const during = yield* messages(thread.id)
      assert.deepStrictEqual(during.data.map((m) => m.id), [`msg_${runId.slice(4)}`, runId])
      yield* gate.open
      const ended = yield* streamOf(runId)
      const [callId] = callIdsOf(ended.chunks)
      assert.deepStrictEqual(during.data[1].parts, [
        { type: "step-start" },
        { type: "tool-mcp__going__wait", toolCallId: callId, state: "input-available", input: {} }
      ])
      const after = yield* messages(thread.id)
      assert.deepStrictEqual(withoutApproval(after.data[1]), foldedParts(ended.message))
      assert.deepStrictEqual(withoutData(after.data[1])[1], {
        type: "tool-mcp__going__wait",
        toolCallId: callId,
        state: "output-available",
        input: {},
        output: [{ type: "text", text: "gate opened" }]
      })
    }).pipe(Effect.scoped))

  it.effect("pages oldest first; the cursor holds while turns are added, after a user's or an assistant's message", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const runs: Array<string> = []
      for (const text of ["one", "two", "three"]) runs.push((yield* turn(thread.id, { input: `/text ${text}` })).runId)
      const ids = (rs: ReadonlyArray<string>) => rs.flatMap((r) => [`msg_${r.slice(4)}`, r])
      const all = yield* messages(thread.id, "?limit=100")
      assert.deepStrictEqual(all.data.map((m) => m.id), ids(runs))
      assert.strictEqual(all.limit, 100)

      // Two at a time: each page one turn.
      const p1 = yield* messages(thread.id, "?limit=2")
      assert.deepStrictEqual([p1.data.map((m) => m.id), p1.hasMore, p1.limit], [ids(runs.slice(0, 1)), true, 2])
      const p2 = yield* messages(thread.id, `?limit=2&cursor=${p1.nextCursor}`)
      assert.deepStrictEqual([p2.data.map((m) => m.id), p2.hasMore], [ids(runs.slice(1, 2)), true])
      const p3 = yield* messages(thread.id, `?limit=2&cursor=${p2.nextCursor}`)
      assert.deepStrictEqual([p3.data.map((m) => m.id), p3.hasMore, p3.nextCursor], [ids(runs.slice(2)), false, null])
      assert.deepStrictEqual([...p1.data, ...p2.data, ...p3.data], all.data)

      // Three at a time: the first page ends on the second turn's user message; a fourth turn comes meanwhile.
      const q1 = yield* messages(thread.id, "?limit=3")
      assert.deepStrictEqual(q1.data.map((m) => m.id), ids(runs).slice(0, 3))
      runs.push((yield* turn(thread.id, { input: "/text four" })).runId)
      const q2 = yield* messages(thread.id, `?limit=3&cursor=${q1.nextCursor}`)
      assert.deepStrictEqual([q2.data.map((m) => m.id), q2.hasMore], [ids(runs).slice(3, 6), true])
      assert.deepStrictEqual(q2.data, all.data.slice(3, 6))
      const q3 = yield* messages(thread.id, `?limit=3&cursor=${q2.nextCursor}`)
      assert.deepStrictEqual([q3.data.map((m) => m.id), q3.hasMore, q3.nextCursor], [ids(runs).slice(6), false, null])
      assert.deepStrictEqual(q3.data[1].parts, [
        { type: "step-start" },
        { type: "text", text: "four", state: "done" },
        ...q3.data[1].parts.slice(2)
      ])
    }))

  it.effect("refusals: 400 a foreign cursor, a limit over 100, warm other than 1; warm=1 is still 204", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      const path = `/v1/threads/${thread.id}/messages`
      // A cursor of another list (it names a thread, not a message) and a limit out of range.
      yield* Collection.threads.create({ agentId: thread.agentId })
      const threads = yield* TestServer.expectOk(
        yield* TestServer.request("GET", `/v1/threads?agentId=${thread.agentId}&limit=1`),
        200,
        Page(Collection.threads.schema)
      )
      yield* expectInvalid(yield* TestServer.request("GET", `${path}?cursor=${threads.nextCursor}`), "cursor")
      yield* expectInvalid(yield* TestServer.request("GET", `${path}?limit=101`), "limit")
      yield* expectInvalid(yield* TestServer.request("GET", `${path}?warm=0`), "warm")
      const warm = yield* TestServer.request("GET", `${path}?warm=1`)
      assert.deepStrictEqual([warm.status, warm.text], [204, ""])
      // A thread without runs has no messages yet.
      assert.deepStrictEqual(yield* messages(thread.id), {
        object: "list",
        data: [],
        hasMore: false,
        nextCursor: null,
        limit: 20
      })
    }))
})

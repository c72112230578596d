/**
 * Warm MCP sessions seen through runs, against a real stateful SDK server:
 * runs in sequence and at the same time share one session while each call
 * carries its own run's Svc-Run-Id, a restarted server is survived by the
 * next run, a tool added during a run (list_changed) is offered to the next
 * one, and a run resuming after a park reads the list again (tools_changed).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Agent } from "../../domain/Agent.ts"
import { Interaction } from "../../domain/Interaction.ts"
import { Page } from "../../domain/Page.ts"
import { RunReceipt } from "../../domain/Run.ts"
import { ThreadCreated } from "../../domain/Thread.ts"
import { ToolServer } from "../../domain/ToolServer.ts"
import { callIdsOf } from "../support/Conversation.ts"
import { type SessionServer, sessionServer } from "../support/SessionMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"
import { parseWithAi } from "../support/UiStream.ts"

type Api = TestServer.TestApi["Service"]

/** Registers the server under `name` (with `policy`) and a thread whose agent uses it. */
const setup = (api: Api, server: SessionServer, name: string, policy: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const registered = yield* TestServer.expectOk(
      yield* api.request("POST", "/v1/tool-servers", { body: { name, transport: "http", url: server.url, ...policy } }),
      200,
      ToolServer
    )
    const agent = yield* TestServer.expectOk(
      yield* api.request("POST", "/v1/agents", { body: { capabilities: { mcp: { toolServerIds: [registered.id] } } } }),
      200,
      Agent
    )
    const thread = () =>
      Effect.flatMap(
        api.request("POST", "/v1/threads", { body: { agentId: agent.id } }),
        (r) => Effect.map(TestServer.expectOk(r, 201, ThreadCreated), (t) => t.id)
      )
    return { thread }
  })

const start = (api: Api, threadId: string, input: string) =>
  Effect.flatMap(
    api.request("POST", `/v1/threads/${threadId}/messages`, {
      body: { input },
      headers: { accept: "application/json" }
    }),
    (reply) => Effect.map(TestServer.expectOk(reply, 200, RunReceipt), (r) => r.runId)
  )

const streamOf = (api: Api, runId: string) =>
  Effect.flatMap(api.request("GET", `/v1/runs/${runId}/stream`), (r) => Effect.orDie(parseWithAi(r.text)))

const outputsOf = (chunks: ReadonlyArray<{ readonly type: string }>): ReadonlyArray<unknown> =>
  chunks.filter((c) => c.type.startsWith("tool-output"))

/** Starts a run and waits for its whole stream. */
const runToEnd = (api: Api, threadId: string, input: string) =>
  Effect.gen(function*() {
    const runId = yield* start(api, threadId, input)
    const { chunks } = yield* streamOf(api, runId)
    return { runId, outputs: outputsOf(chunks), callId: callIdsOf(chunks)[0] }
  })

const tool = (server: string, name: string, input: unknown = {}) =>
  `/tool mcp__${server}__${name} ${JSON.stringify(input)}`

layer(TestServer.layer(), { timeout: 60_000 })("warm MCP sessions", (it) => {
  it.effect("two runs in sequence open one MCP session; each tool call carries its own run's Svc-Run-Id", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const server = yield* sessionServer
      const { thread } = yield* setup(api, server, "warm1")
      const first = yield* runToEnd(api, yield* thread(), tool("warm1", "echo", { text: "one" }))
      const second = yield* runToEnd(api, yield* thread(), tool("warm1", "echo", { text: "two" }))
      assert.deepStrictEqual(first.outputs, [{
        type: "tool-output-available",
        toolCallId: first.callId,
        output: [{ type: "text", text: "one" }]
      }])
      assert.deepStrictEqual(second.outputs, [{
        type: "tool-output-available",
        toolCallId: second.callId,
        output: [{ type: "text", text: "two" }]
      }])
      assert.strictEqual(server.opened(), 1)
      assert.strictEqual(server.seen().filter((s) => s.rpc === "initialize").length, 1)
      assert.deepStrictEqual(server.deleted(), [])
      const calls = server.seen().filter((s) => s.rpc === "tools/call")
      assert.deepStrictEqual(calls.map((c) => [c.runId, c.rootRunId]), [[first.runId, first.runId], [
        second.runId,
        second.runId
      ]])
      assert.notStrictEqual(first.runId, second.runId)
      assert.strictEqual(new Set(calls.map((c) => c.sessionId)).size, 1)
    }).pipe(Effect.scoped))

  it.effect("concurrent runs share the session", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const server = yield* sessionServer
      const { thread } = yield* setup(api, server, "warm2")
      const [a, b, c] = yield* Effect.all([thread(), thread(), thread()])
      const runs = yield* Effect.all([a, b, c].map((t) => start(api, t, tool("warm2", "wait"))), {
        concurrency: "unbounded"
      })
      yield* server.awaitWaiting(3)
      assert.strictEqual(server.opened(), 1)
      yield* server.open
      for (const runId of runs) {
        const { chunks } = yield* streamOf(api, runId)
        assert.deepStrictEqual(outputsOf(chunks), [{
          type: "tool-output-available",
          toolCallId: callIdsOf(chunks)[0],
          output: [{ type: "text", text: "gate opened" }]
        }])
      }
      const waits = server.seen().filter((s) => s.rpc === "tools/call")
      assert.deepStrictEqual(waits.map((w) => w.runId).sort(), [...runs].sort())
      assert.strictEqual(new Set(waits.map((w) => w.sessionId)).size, 1)
    }).pipe(Effect.scoped))

  it.effect("a restarted server (connections dropped, session gone) is survived by the next run", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const server = yield* sessionServer
      const { thread } = yield* setup(api, server, "warm3")
      yield* runToEnd(api, yield* thread(), tool("warm3", "echo", { text: "before" }))
      const [before] = server.seen().filter((s) => s.rpc === "tools/call")
      yield* server.restart
      // The service notices the broken stream and drops the session (its DELETE reaches the new server, which does not know it).
      yield* server.awaitSeen((s) => s.http === "DELETE" && s.sessionId === before.sessionId)
      const after = yield* runToEnd(api, yield* thread(), tool("warm3", "echo", { text: "after" }))
      assert.deepStrictEqual(after.outputs, [{
        type: "tool-output-available",
        toolCallId: after.callId,
        output: [{ type: "text", text: "after" }]
      }])
      assert.strictEqual(server.opened(), 2)
    }).pipe(Effect.scoped))

  it.effect("a session the server expired (404) is replaced and the call sent once more", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const server = yield* sessionServer
      const { thread } = yield* setup(api, server, "warm4")
      yield* runToEnd(api, yield* thread(), tool("warm4", "echo", { text: "before" }))
      yield* server.expire
      const after = yield* runToEnd(api, yield* thread(), tool("warm4", "echo", { text: "after" }))
      assert.deepStrictEqual(after.outputs, [{
        type: "tool-output-available",
        toolCallId: after.callId,
        output: [{ type: "text", text: "after" }]
      }])
      assert.strictEqual(server.opened(), 2)
      const calls = server.seen().filter((s) => s.rpc === "tools/call")
      assert.deepStrictEqual(calls.map((c) => c.runId), [calls[0].runId, after.runId, after.runId])
    }).pipe(Effect.scoped))

  it.effect("a tool the server added during a run (notifications/tools/list_changed) is offered to the next run", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const server = yield* sessionServer
      const { thread } = yield* setup(api, server, "warm5")
      const id = yield* thread()
      yield* runToEnd(api, id, tool("warm5", "add_tool", { text: "late" }))
      const reply = yield* api.request("POST", `/v1/threads/${id}/messages`, { body: { input: "/show-tools" } })
      const { message } = yield* Effect.orDie(parseWithAi(reply.text))
      const shown = (message?.parts ?? []).flatMap((p) => ("text" in p && typeof p.text === "string" ? [p.text] : []))
        .join("")
      assert.include(shown, "\"mcp__warm5__late\"")
      assert.strictEqual(server.opened(), 1)
    }).pipe(Effect.scoped))

  it.effect("tools_changed: a run resuming after a park reads the list again; a call whose tool left it fails with that code", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const server = yield* sessionServer
      const { thread } = yield* setup(api, server, "warm6", { approval: "always" })
      const runId = yield* start(api, yield* thread(), tool("warm6", "echo", { text: "x" }))
      yield* streamOf(api, runId)
      const pending = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/interactions?runId=${runId}&status=pending`),
        200,
        Page(Interaction)
      )
      const [interaction] = pending.data
      // The server stops offering echo without telling anyone; the warm session's cached list still has it.
      yield* server.setTools(["add_tool", "wait"])
      yield* TestServer.expectOk(
        yield* api.request("POST", `/v1/interactions/${interaction.id}/resolve`, {
          body: { inputResponses: [{ requestId: interaction.id, optionId: "approve" }] }
        }),
        200,
        Interaction
      )
      const { chunks } = yield* streamOf(api, runId)
      // An expected failure the model reads: the call finished, its output the failure (spec 6.2).
      assert.deepStrictEqual(outputsOf(chunks), [{
        type: "tool-output-available",
        toolCallId: callIdsOf(chunks)[0],
        output: {
          type: "tool-output-error",
          error: {
            code: "tools_changed",
            message:
              "'mcp__warm6__echo' is no longer among this agent's tools (its server or HTTP document changed while the run waited); start a new run."
          }
        }
      }])
      assert.strictEqual(server.opened(), 1)
      assert.strictEqual(server.seen().filter((s) => s.rpc === "tools/call").length, 0)
    }).pipe(Effect.scoped))
})

/**
 * NUL characters (U+0000) in text the service did not get from the client: a
 * tool input the model wrote, an MCP tool's result, an HTTP tool's response
 * body, a model's answer (aimock), a question the model asked. PostgreSQL
 * cannot store a NUL, and none of them may fail the run: each is stored and
 * streamed with U+FFFD in its place, the same live and replayed, and the Run
 * and its interactions read back fine.
 */
import { assert } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Interaction } from "../../domain/Interaction.ts"
import { Page } from "../../domain/Page.ts"
import { aimock, redactedKey } from "../support/Aimock.ts"
import * as ApiServer from "../support/ApiServer.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, callIdsOf, getRun, send, startRun, streamOf, textOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"

const NUL = "\u0000"
const REPLACED = "a\uFFFDb"

/** The scripted model on `lite`, aimock (OpenAI-compatible) on `core`. */
const Service = Layer.unwrap(
  Effect.gen(function*() {
    const peer = yield* aimock((mock) => {
      mock.onMessage("say nul", { content: `a${NUL}b` })
      mock.on({ userMessage: "echo nul", hasToolResult: false }, {
        toolCalls: [{ id: "call_n1", name: "mcp__nulai__echo", arguments: JSON.stringify({ text: `a${NUL}b` }) }]
      })
      mock.onToolResult("call_n1", { content: `echoed a${NUL}b` })
    })
    return TestServer.layer({
      bands: {
        lite: { route: "scripted", strict: true },
        core: { route: "openai:gpt-test", strict: false },
        frontier: { route: null, strict: false }
      },
      openai: { baseUrl: `${peer.url}/v1`, apiKey: Option.some(redactedKey) }
    })
  })
)

/** A JSON escape of U+0000 (a backslash not itself escaped, then u0000), as the SSE frames would carry a NUL. */
const escapedNul = /(?:^|[^\\])(?:\\\\)*\\u0000/

/** No NUL anywhere in a reply's text, raw or escaped (text that spells the escape out is not one). */
const assertNoNul = (text: string) => {
  assert.notInclude(text, NUL)
  assert.notMatch(text, escapedNul)
}

const storyApi = JSON.stringify({
  openapi: "3.0.3",
  info: { title: "Stories", version: "1.0.0" },
  paths: { "/story": { get: { operationId: "getStory", responses: { "200": { description: "OK" } } } } }
})

TestServer.suiteWith(Service)("NUL characters from models and tools", (it) => {
  it.effect("scripted model: a tool input with a NUL, the MCP tool's result echoing it, the answer quoting it", () =>
    Effect.gen(function*() {
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({
        name: "nulmcp",
        transport: "http",
        url: gate.url,
        trusted: true
      })
      const { thread } = yield* agentWithThread({ band: "lite", capabilities: { mcp: { toolServerIds: [server.id] } } })
      // The client sends the escape as text (backslash, u, 0000): the model's JSON makes it a NUL.
      const live = yield* send(thread.id, "/tool mcp__nulmcp__echo {\"text\":\"a\\u0000b\"}")
      const replay = yield* streamOf(live.runId)
      assertNoNul(replay.reply.text)
      const tools = replay.chunks.filter((c) => c.type === "tool-input-available" || c.type === "tool-output-available")
      const [callId] = callIdsOf(replay.chunks)
      assert.deepStrictEqual(tools, [
        { type: "tool-input-available", toolCallId: callId, toolName: "mcp__nulmcp__echo", input: { text: REPLACED } },
        { type: "tool-output-available", toolCallId: callId, output: [{ type: "text", text: REPLACED }] }
      ])
      assert.strictEqual(textOf(replay.message), `Result: ${REPLACED}`)
      assert.deepStrictEqual(live.parsed.chunks, replay.chunks, "live followers see what is stored")
      const run = yield* getRun(live.runId)
      assert.strictEqual(run.status, "completed")
      // The next turn reads the checkpointed conversation back.
      const next = yield* send(thread.id, "/text still here")
      assert.strictEqual(textOf(next.parsed.message), "still here")
      assert.strictEqual((yield* getRun(next.runId)).status, "completed")
    }).pipe(Effect.scoped))

  it.effect("HTTP tool: a response body with a NUL", () =>
    Effect.gen(function*() {
      const api = yield* ApiServer.serve(storyApi, () => ({ status: 200, body: { story: `a${NUL}b` } }))
      const connection = yield* Collection.httpConnections.create({
        name: "nulhttp",
        spec: `${api.origin}/openapi.json`,
        baseUrl: api.origin,
        trusted: true
      })
      const { thread } = yield* agentWithThread({
        band: "lite",
        capabilities: { http: { connectionIds: [connection.id] } }
      })
      const { runId } = yield* send(thread.id, "/tool api__nulhttp__getStory {}")
      const replay = yield* streamOf(runId)
      assertNoNul(replay.reply.text)
      const output = replay.chunks.find((c) => c.type === "tool-output-available")
      assert.deepInclude(output, {
        type: "tool-output-available",
        output: { status: 200, statusText: "OK", body: { story: REPLACED } }
      })
      assert.strictEqual((yield* getRun(runId)).status, "completed")
    }).pipe(Effect.scoped))

  it.effect("a question the model asks with a NUL: the interaction is stored and read back", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ band: "lite", capabilities: { userInteraction: true } })
      const ask = JSON.stringify({ title: "Go\\u0000on?", questions: [{ id: "go", prompt: "Go?" }] }).replace(
        "\\\\u0000",
        "\\u0000"
      )
      const { runId } = yield* send(thread.id, `/tool ask_question ${ask}`)
      assertNoNul((yield* streamOf(runId)).reply.text)
      const page = yield* TestServer.expectOk(
        yield* TestServer.request("GET", `/v1/interactions?runId=${runId}`),
        200,
        Page(Interaction)
      )
      assert.strictEqual(page.data.length, 1)
      assert.deepInclude(page.data[0]?.request, { title: "Go\uFFFDon?" })
      assert.strictEqual((yield* getRun(runId)).status, "waiting_for_input")
    }))

  it.effect("a model (aimock) answering with a NUL", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({})
      const { runId } = yield* startRun(thread.id, { input: "say nul" })
      const replay = yield* streamOf(runId)
      assertNoNul(replay.reply.text)
      assert.strictEqual(textOf(replay.message), REPLACED)
      assert.strictEqual((yield* getRun(runId)).status, "completed")
    }))

  it.effect("a model (aimock) calling an MCP tool with a NUL in its arguments", () =>
    Effect.gen(function*() {
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({
        name: "nulai",
        transport: "http",
        url: gate.url,
        trusted: true
      })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const { runId } = yield* startRun(thread.id, { input: "echo nul" })
      const replay = yield* streamOf(runId)
      assertNoNul(replay.reply.text)
      assert.deepInclude(replay.chunks.find((c) => c.type === "tool-input-available"), { input: { text: REPLACED } })
      assert.deepInclude(replay.chunks.find((c) => c.type === "tool-output-available"), {
        output: [{ type: "text", text: REPLACED }]
      })
      assert.strictEqual(textOf(replay.message), `echoed ${REPLACED}`)
      assert.strictEqual((yield* getRun(runId)).status, "completed")
    }).pipe(Effect.scoped))
})

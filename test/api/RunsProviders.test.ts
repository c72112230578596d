/**
 * Runs on real model routes: bands routed to `openai:` and `anthropic:`
 * against @copilotkit/aimock over HTTP, through the whole service: streamed
 * text, a tool call to a real MCP server and its follow-up, usage and cost
 * from the provider's counts, pricing_unavailable, upstream_unavailable after
 * retries on TestClock, and an HTTP-connection tool as the provider sees it
 * (deferred schema, system prompt notices, the untrusted envelope).
 */
import { assert } from "@effect/vitest"
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { RunId } from "../../domain/Ids.ts"
import { Interaction } from "../../domain/Interaction.ts"
import { Page } from "../../domain/Page.ts"
import { EventLog, MaxHold } from "../../src/runs/EventLog.ts"
import { type Aimock, aimock, redactedKey, sleepProbeWhere } from "../support/Aimock.ts"
import * as ApiServer from "../support/ApiServer.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, callIdsOf, getRun, startRun, streamOf, textOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"

/** The run's whole stream, parsed, and the Run once it ended. */
const finish = (runId: string) =>
  Effect.gen(function*() {
    const parsed = yield* streamOf(runId)
    const run = yield* getRun(runId)
    return { ...parsed, run }
  })

/** The service's clock: the test's TestClock, reporting each sleep under 2 s (the retry backoffs; pool and server timers are longer) as it starts. */
class Backoffs
  extends Context.Service<Backoffs, { readonly next: Effect.Effect<Duration.Duration> }>()("test/Backoffs")
{}

/** The model server, for its request journal. */
class Peer extends Context.Service<Peer, Aimock>()("test/Peer") {}

const Providers = Layer.unwrap(
  Effect.gen(function*() {
    // Backoffs only: not the stream writer's hold (MaxHold) nor anything of two seconds or more.
    const probe = yield* sleepProbeWhere((duration) =>
      Duration.isGreaterThan(duration, MaxHold) && Duration.isLessThan(duration, Duration.seconds(2))
    )
    const peer = yield* aimock((mock) => {
      mock.onMessage("hello", { content: "Hi there, friend!", usage: { prompt_tokens: 11, completion_tokens: 4 } }, {
        chunkSize: 5
      })
      mock.on({ userMessage: "echo please", hasToolResult: false }, {
        toolCalls: [{ id: "call_e1", name: "mcp__gate9__echo", arguments: JSON.stringify({ text: "from the model" }) }],
        usage: { prompt_tokens: 20, completion_tokens: 8 }
      })
      mock.onToolResult("call_e1", {
        content: "The tool said hello back.",
        usage: { prompt_tokens: 30, completion_tokens: 6 }
      })
      // Two tool steps on Anthropic: each result matches only when it comes back under the provider's own tool_use id.
      mock.on({ userMessage: "echo twice", hasToolResult: false }, {
        toolCalls: [{ id: "toolu_a1", name: "mcp__gate11__echo", arguments: JSON.stringify({ text: "one" }) }]
      })
      mock.onToolResult("toolu_a1", {
        toolCalls: [{ id: "toolu_a2", name: "mcp__gate11__echo", arguments: JSON.stringify({ text: "two" }) }]
      })
      mock.onToolResult("toolu_a2", { content: "Echoed twice." })
      mock.on({ userMessage: "pets please", hasToolResult: false }, {
        toolCalls: [{ id: "call_p1", name: "api__petsai__getPetById", arguments: JSON.stringify({ petId: 7 }) }],
        usage: { prompt_tokens: 20, completion_tokens: 8 }
      })
      mock.onToolResult("call_p1", { content: "Pet 7 is fine.", usage: { prompt_tokens: 30, completion_tokens: 6 } })
      // A call parked for approval: its result matches only under the provider's own id, read back from the park record.
      mock.on({ userMessage: "park please", hasToolResult: false }, {
        toolCalls: [{ id: "call_k1", name: "mcp__gate14__echo", arguments: JSON.stringify({ text: "approved" }) }]
      })
      mock.onToolResult("call_k1", { content: "Parked and back." })
      // The step after a tool step that claimed a follow-up: held until the test lets the model answer.
      mock.on({ userMessage: "hold it", hasToolResult: false }, {
        toolCalls: [{ id: "call_w1", name: "mcp__gate13__wait", arguments: "{}" }]
      })
      mock.on({ userMessage: "and this too" }, async () => {
        followupStep.reached()
        await followupStep.answer
        return { content: "Answered both." }
      })
      mock.onMessage("broken", { error: { message: "The server had an error", type: "server_error" }, status: 500 })
      // The context window outgrown after a first, billed step: OpenAI's and Anthropic's own refusals.
      mock.on({ userMessage: "overflow openai", hasToolResult: false }, {
        toolCalls: [{ id: "call_o1", name: "mcp__gate10__echo", arguments: JSON.stringify({ text: "big" }) }],
        usage: { prompt_tokens: 20, completion_tokens: 8 }
      })
      mock.onToolResult("call_o1", {
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded"
        },
        status: 400
      })
      mock.on({ userMessage: "overflow anthropic", hasToolResult: false }, {
        toolCalls: [{ id: "toolu_o2", name: "mcp__gate10__echo", arguments: JSON.stringify({ text: "big" }) }],
        usage: { input_tokens: 20, output_tokens: 8 }
      })
      mock.onToolResult("toolu_o2", {
        error: { message: "prompt is too long: 208310 tokens > 200000 maximum", type: "invalid_request_error" },
        status: 400
      })
    })
    const server = TestServer.layer({
      bands: {
        lite: { route: "openai:unpriced", strict: false },
        core: { route: "openai:gpt-test", strict: false },
        frontier: { route: "anthropic:claude-test", strict: false }
      },
      routePrices: "openai:gpt-test=1000/2000;anthropic:claude-test=3/15",
      openai: { baseUrl: `${peer.url}/v1`, apiKey: Option.some(redactedKey) },
      anthropic: { baseUrl: `${peer.url}/v1`, apiKey: Option.some(redactedKey) }
    })
    return Layer.merge(
      server.pipe(Layer.provide(Layer.succeed(Clock.Clock)(probe.clock))),
      Layer.merge(Layer.succeed(Backoffs)({ next: probe.nextSleep }), Layer.succeed(Peer)(peer))
    )
  })
)

/** The model request that opens the step after a follow-up was claimed: `reached` when it arrives, answered once `answer` resolves. */
const followupStep = (() => {
  let reached = () => {}
  let release = () => {}
  const arrived = new Promise<void>((resolve) => (reached = resolve))
  const answer = new Promise<void>((resolve) => (release = resolve))
  return { reached: () => reached(), arrived, answer, release: () => release() }
})()

/** The call ids a provider request carried (aimock journals Anthropic requests in the OpenAI shape): on assistant calls and on results. */
const providerIdsIn = (body: unknown) => {
  const messages = (body as {
    readonly messages: ReadonlyArray<
      {
        readonly role: string
        readonly tool_call_id?: string
        readonly tool_calls?: ReadonlyArray<{ readonly id: string }>
      }
    >
  }).messages
  return {
    calls: messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)),
    results: messages.flatMap((m) => (m.role === "tool" && m.tool_call_id !== undefined ? [m.tool_call_id] : []))
  }
}

TestServer.suiteWith(Providers)("runs on provider routes", (it) => {
  it.effect("openai: the answer streams; usage and cost come from the provider's token counts", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({})
      const { chunks, message, run } = yield* finish((yield* startRun(thread.id, { input: "hello" })).runId)
      assert.strictEqual(textOf(message), "Hi there, friend!")
      assert.isAbove(chunks.filter((c) => c.type === "text-delta").length, 1)
      assert.strictEqual(run.status, "completed")
      assert.deepStrictEqual(run.usage, { inputTokens: 11, outputTokens: 4, totalTokens: 15, costCents: 19, steps: 1 })
    }))

  it.effect("openai: a tool call runs on the MCP server and the follow-up answer completes the turn", () =>
    Effect.gen(function*() {
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate9", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const peer = yield* Peer
      const before = (yield* peer.journal).length
      const { chunks, message, run } = yield* finish((yield* startRun(thread.id, { input: "echo please" })).runId)
      // The stream shows the service's tc_ id (spec 1); the provider gets its own call_e1 back.
      const [callId] = callIdsOf(chunks)
      assert.deepStrictEqual(chunks.filter((c) => c.type.startsWith("tool-")), [
        { type: "tool-input-start", toolCallId: callId, toolName: "mcp__gate9__echo" },
        {
          type: "tool-input-available",
          toolCallId: callId,
          toolName: "mcp__gate9__echo",
          input: { text: "from the model" }
        },
        { type: "tool-output-available", toolCallId: callId, output: [{ type: "text", text: "from the model" }] }
      ])
      assert.strictEqual(textOf(message), "The tool said hello back.")
      assert.deepStrictEqual(run.usage, { inputTokens: 50, outputTokens: 14, totalTokens: 64, costCents: 78, steps: 2 })
      assert.deepStrictEqual(providerIdsIn((yield* peer.journal).at(-1)?.body), {
        calls: ["call_e1"],
        results: ["call_e1"]
      })
      assert.strictEqual((yield* peer.journal).length - before, 2)
    }).pipe(Effect.scoped))

  it.effect("anthropic: two tool steps; the stream shows tc_ ids, the provider gets its toolu_ ids back, also from the thread's history", () =>
    Effect.gen(function*() {
      const peer = yield* Peer
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate11", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({
        band: "frontier",
        capabilities: { mcp: { toolServerIds: [server.id] } }
      })
      const { chunks, message, run } = yield* finish((yield* startRun(thread.id, { input: "echo twice" })).runId)
      const ids = callIdsOf(chunks)
      assert.strictEqual(ids.length, 2)
      assert.deepStrictEqual(
        chunks.filter((c) => c.type === "tool-output-available"),
        [
          { type: "tool-output-available", toolCallId: ids[0], output: [{ type: "text", text: "one" }] },
          { type: "tool-output-available", toolCallId: ids[1], output: [{ type: "text", text: "two" }] }
        ]
      )
      assert.strictEqual(textOf(message), "Echoed twice.")
      assert.strictEqual(run.usage?.steps, 3)
      const both = { calls: ["toolu_a1", "toolu_a2"], results: ["toolu_a1", "toolu_a2"] }
      assert.deepStrictEqual(providerIdsIn((yield* peer.journal).at(-1)?.body), both)
      // The next turn (a later createdAt) sends the earlier run's calls from its checkpoints, still under the provider's ids.
      yield* TestClock.adjust("1 second")
      yield* finish((yield* startRun(thread.id, { input: "hello" })).runId)
      assert.deepStrictEqual(providerIdsIn((yield* peer.journal).at(-1)?.body), both)
    }).pipe(Effect.scoped))

  it.effect("anthropic: the answer streams and is billed at the route's price", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ band: "frontier" })
      const { message, run } = yield* finish((yield* startRun(thread.id, { input: "hello" })).runId)
      assert.strictEqual(textOf(message), "Hi there, friend!")
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.usage?.inputTokens, 11)
      assert.strictEqual(run.usage?.outputTokens, 4)
      assert.strictEqual(run.usage?.costCents, (11 * 3 + 4 * 15) / 1000)
    }))

  it.effect("a budget on a route without a price fails the run with pricing_unavailable before inference; nothing is billed", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ band: "lite" })
      const { chunks, run } = yield* finish((yield* startRun(thread.id, { input: "hello", budgetCents: 50 })).runId)
      assert.strictEqual(run.status, "failed")
      assert.strictEqual(run.terminalReason, "pricing_unavailable")
      assert.strictEqual(run.error?.code, "pricing_unavailable")
      assert.deepStrictEqual(run.usage, { inputTokens: 0, outputTokens: 0, totalTokens: 0, costCents: 0, steps: 0 })
      assert.isFalse(chunks.some((c) => c.type === "start-step"))
    }))

  it.effect("a provider that stays unavailable fails the run with upstream_unavailable (terminalReason null) after its retries", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({})
      const backoffs = yield* Backoffs
      const { runId } = yield* startRun(thread.id, { input: "broken" })
      // The retries back off on the service's clock; each wait is let through as it starts.
      const waited: Array<number> = []
      for (let i = 0; i < 4; i++) {
        const wait = yield* backoffs.next
        waited.push(Duration.toMillis(wait))
        yield* TestClock.adjust(wait)
      }
      assert.deepStrictEqual(waited, [200, 400, 800, 1600])
      const { run: failed } = yield* finish(runId)
      assert.strictEqual(failed.status, "failed")
      assert.strictEqual(failed.terminalReason, null)
      assert.strictEqual(failed.error?.code, "upstream_unavailable")
      assert.match(failed.error?.message ?? "", /HTTP 500/)
    }))

  it.effect("the provider says the context is too long (openai and anthropic): failed with context_overflow, usage so far billed, no reference", () =>
    Effect.gen(function*() {
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate10", transport: "http", url: gate.url })
      for (const [band, input] of [["core", "overflow openai"], ["frontier", "overflow anthropic"]] as const) {
        const { thread } = yield* agentWithThread({ band, capabilities: { mcp: { toolServerIds: [server.id] } } })
        const { chunks, run } = yield* finish((yield* startRun(thread.id, { input })).runId)
        assert.strictEqual(run.status, "failed", band)
        assert.strictEqual(run.terminalReason, "context_overflow")
        assert.strictEqual(run.error?.code, "context_overflow")
        assert.isUndefined(run.error?.reference)
        assert.match(run.error?.message ?? "", /HTTP 400/)
        // The first step was billed; the refused one was not.
        assert.strictEqual(run.usage?.inputTokens, 20)
        assert.strictEqual(run.usage?.outputTokens, 8)
        assert.strictEqual(run.usage?.steps, 1)
        assert.deepStrictEqual(chunks.slice(-3), [
          { type: "data-svc-terminal", data: { terminalReason: "context_overflow" } },
          { type: "data-svc-usage", data: run.usage },
          { type: "finish", finishReason: "error" }
        ])
      }
    }).pipe(Effect.scoped))

  it.effect("openai: a call parked for approval resumes with the provider's own id; the interaction and stream show the tc_ id", () =>
    Effect.gen(function*() {
      const peer = yield* Peer
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({
        name: "gate14",
        transport: "http",
        url: gate.url,
        approval: "always"
      })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const { runId } = yield* startRun(thread.id, { input: "park please" })
      const parked = yield* streamOf(runId)
      const [callId] = callIdsOf(parked.chunks)
      const page = yield* TestServer.expectOk(
        yield* TestServer.request("GET", `/v1/interactions?runId=${runId}`),
        200,
        Page(Interaction)
      )
      const [interaction] = page.data
      assert.strictEqual(interaction.toolCallId, callId)
      yield* TestServer.expectOk(
        yield* TestServer.request("POST", `/v1/interactions/${interaction.id}/resolve`, {
          body: { inputResponses: [{ requestId: interaction.id, optionId: "approve" }] }
        }),
        200,
        Interaction
      )
      const { chunks, message, run } = yield* finish(runId)
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(textOf(message), "Parked and back.")
      assert.deepStrictEqual(chunks.filter((c) => c.type === "tool-output-available"), [
        { type: "tool-output-available", toolCallId: callId, output: [{ type: "text", text: "approved" }] }
      ])
      assert.deepStrictEqual(providerIdsIn((yield* peer.journal).at(-1)?.body), {
        calls: ["call_k1"],
        results: ["call_k1"]
      })
    }).pipe(Effect.scoped))

  it.effect("a claimed follow-up stays listed on the run until its replay is stored: never neither listed nor replayed", () =>
    Effect.gen(function*() {
      const events = yield* EventLog
      const gate = yield* gateServer
      const server = yield* Collection.toolServers.create({ name: "gate13", transport: "http", url: gate.url })
      const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
      const { runId } = yield* startRun(thread.id, { input: "hold it" })
      yield* gate.waiting
      const busy = yield* TestServer.expectError(
        yield* TestServer.request("POST", `/v1/threads/${thread.id}/messages`, {
          body: { input: "and this too" },
          headers: { accept: "application/json" }
        }),
        409,
        "api_error",
        "thread_busy"
      )
      const followupId = busy.details?.["followup_id"]
      yield* gate.open
      // The run claimed the follow-up at the turn boundary and now waits on the model's next step.
      yield* Effect.promise(() => followupStep.arrived)
      const run = yield* getRun(runId)
      const listed = (run.queuedFollowups ?? []).some((f) => f.id === followupId)
      const replayed = (yield* events.read(RunId.make(runId), 0)).some((e) =>
        e.chunk.type === "data-svc-followup-replayed"
      )
      assert.isTrue(
        listed || replayed,
        `follow-up neither listed (${JSON.stringify(run.queuedFollowups)}) nor replayed`
      )
      followupStep.release()
      const { chunks, message, run: done } = yield* finish(runId)
      assert.deepStrictEqual(chunks.filter((c) => c.type === "data-svc-followup-replayed"), [
        { type: "data-svc-followup-replayed", data: { followupId, text: "and this too" } }
      ])
      assert.strictEqual(textOf(message), "Answered both.")
      assert.strictEqual(done.status, "completed")
      assert.isUndefined(done.queuedFollowups)
    }).pipe(Effect.scoped))

  it.effect("openai: an HTTP operation reaches the provider deferred, with load_tools and the prompt's notices; its result comes back enveloped", () =>
    Effect.gen(function*() {
      const peer = yield* Peer
      const spec = JSON.stringify({
        openapi: "3.0.3",
        info: { title: "Pets", version: "1" },
        paths: {
          "/pets/{petId}": {
            get: {
              operationId: "getPetById",
              summary: "Find a pet",
              parameters: [{ name: "petId", in: "path", required: true, schema: { type: "integer" } }],
              responses: { "200": { description: "OK" } }
            }
          }
        }
      })
      const server = yield* ApiServer.serve(spec, () => ({ status: 200, body: { id: 7, name: "Rex" } }))
      const connection = yield* Collection.httpConnections.create({ name: "petsai", spec, baseUrl: server.origin })
      const { thread } = yield* agentWithThread({ capabilities: { http: { connectionIds: [connection.id] } } })
      const before = (yield* peer.journal).length
      const { message, run } = yield* finish((yield* startRun(thread.id, { input: "pets please" })).runId)
      assert.strictEqual(textOf(message), "Pet 7 is fine.")
      assert.strictEqual(run.status, "completed")
      assert.deepStrictEqual(server.received().map((r) => r.path), ["/pets/7"])

      type Body = {
        readonly messages: ReadonlyArray<
          { readonly role: string; readonly content: unknown; readonly tool_call_id?: string }
        >
        readonly tools: ReadonlyArray<
          { readonly function: { readonly name: string; readonly description: string; readonly parameters: unknown } }
        >
      }
      const [first, second] = (yield* peer.journal).slice(before).map((e) => e.body as Body)
      assert.deepStrictEqual(first.tools.map((t) => t.function), [
        {
          name: "api__petsai__getPetById",
          description: "Find a pet",
          parameters: { type: "object", additionalProperties: true }
        },
        {
          name: "load_tools",
          description: "Load the full input schemas of tools listed without one, by name, before calling them.",
          parameters: {
            type: "object",
            properties: { names: { type: "array", items: { type: "string" } } },
            required: ["names"],
            additionalProperties: false
          }
        }
      ])
      const system = String(first.messages.find((m) => m.role === "system")?.content)
      assert.include(system, "Call load_tools with their names")
      assert.include(system, "Tool results wrapped in <untrusted_data> come from external systems.")
      assert.deepStrictEqual(second.messages.find((m) => m.role === "tool"), {
        role: "tool",
        tool_call_id: "call_p1",
        content: `<untrusted_data source="api__petsai__getPetById">\n${
          JSON.stringify({ status: 200, statusText: "OK", body: { id: 7, name: "Rex" } })
        }\n</untrusted_data>`
      })
    }).pipe(Effect.scoped))
})

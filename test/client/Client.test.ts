/**
 * The typed client as a user's script uses it: imported by package name
 * (`agent-service/client`), Promises only, against the whole service on a
 * real listener with aimock as the model and a real MCP server for tools.
 * An agent and a run, the chunks iterated and folded by the `ai` package's
 * `readUIMessageStream` unchanged, a stream resumed after its connection is
 * cut by a real proxy (no duplicate, no gap), an approval resolved while the
 * stream follows the parked run, and the error envelope as a typed error.
 */
import { assert } from "@effect/vitest"
import { ClientError, createClient, ServiceError } from "agent-service/client"
import type { Chunk } from "agent-service/client"
import { readUIMessageStream, type UIMessageChunk } from "ai"
import { Context, Effect, Layer, Option } from "effect"
import { aimock, redactedKey } from "../support/Aimock.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, streamOf, textOf } from "../support/Conversation.ts"
import { cutProxy } from "../support/CutProxy.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"

/** The model's script: plain answers, a call to the gate's `wait`, and a call that needs approval. */
const Model = Layer.unwrap(
  Effect.gen(function*() {
    const peer = yield* aimock((mock) => {
      mock.onMessage("hello", { content: "Hi there, friend!", usage: { prompt_tokens: 11, completion_tokens: 4 } }, {
        chunkSize: 5
      })
      mock.on({ userMessage: "wait please", hasToolResult: false }, {
        toolCalls: [{ id: "call_w", name: "mcp__clientgate__wait", arguments: "{}" }]
      })
      mock.onToolResult("call_w", { content: "Waited long enough." }, { chunkSize: 4 })
      mock.on({ userMessage: "park please", hasToolResult: false }, {
        toolCalls: [{ id: "call_k", name: "mcp__clientgated__echo", arguments: JSON.stringify({ text: "approved" }) }]
      })
      mock.onToolResult("call_k", { content: "Parked and back." })
    })
    return TestServer.layer({
      bands: {
        lite: { route: "openai:gpt-test", strict: false },
        core: { route: "openai:gpt-test", strict: false },
        frontier: { route: null, strict: false }
      },
      openai: { baseUrl: `${peer.url}/v1`, apiKey: Option.some(redactedKey) }
    })
  })
)

/** What a user's script reads from a stream. */
const collect = async (stream: AsyncIterable<Chunk>, onChunk: (chunk: Chunk) => Promise<void> = async () => {}) => {
  const chunks: Array<Chunk> = []
  for await (const chunk of stream) {
    chunks.push(chunk)
    await onChunk(chunk)
  }
  return chunks
}

/** An agent using the gate MCP server under `name` (with the server's other options). */
const gatedAgent = (name: string, options: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const server = yield* Collection.toolServers.create({ name, transport: "http", url: gate.url, ...options })
    const { agent, thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
    return { gate, agent, thread }
  })

class Service extends Context.Service<Service, { readonly url: string }>()("test/Service") {}
const Harness = Layer.effect(Service)(Effect.map(TestServer.TestApi, (api) => ({ url: api.url }))).pipe(
  Layer.provideMerge(Model)
)

TestServer.suiteWith(Harness)("client: agent-service/client from a script", (it) => {
  it.effect("creates an agent and a thread, sends a message, iterates its chunks; readUIMessageStream folds a replay unchanged", () =>
    Effect.gen(function*() {
      const { url } = yield* Service
      const script = async () => {
        const client = createClient({ baseUrl: url, apiKey: TestServer.Keys.a })
        const agent = await client.agents.create({ context: "You are concise.", metadata: { team: "docs" } })
        const thread = await client.threads.create({ agentId: agent.id })
        const { runId, stream } = await client.threads.send(thread.id, "hello")
        const live = await collect(stream)
        let text = ""
        for await (const message of readUIMessageStream({ stream: client.runs.stream(runId) })) {
          text = message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")
        }
        const run = await client.runs.get(runId)
        const listed = await client.agents.list({ limit: 100 })
        return { agent, runId, live, text, run, listed }
      }
      const { agent, runId, live, text, run, listed } = yield* Effect.promise(script)
      const replay = yield* streamOf(runId)
      assert.deepStrictEqual<ReadonlyArray<UIMessageChunk>>(live, replay.chunks)
      assert.strictEqual(text, "Hi there, friend!")
      assert.strictEqual(textOf(replay.message), "Hi there, friend!")
      assert.strictEqual(run.status, "completed")
      assert.deepStrictEqual(run.usage, { inputTokens: 11, outputTokens: 4, totalTokens: 15, costCents: 0, steps: 1 })
      assert.isTrue(listed.data.some((a) => a.id === agent.id && a.metadata["team"] === "docs"))
    }))

  it.effect("a stream cut mid-run by the network resumes with Last-Event-ID: every chunk once, in order", () =>
    Effect.gen(function*() {
      const { url } = yield* Service
      const proxy = yield* cutProxy(url)
      const { gate, thread } = yield* gatedAgent("clientgate")
      const cutAndOpen = Effect.andThen(gate.waiting, Effect.andThen(proxy.cut, gate.open))
      const script = async () => {
        const client = createClient({ baseUrl: proxy.url, apiKey: TestServer.Keys.a })
        const { runId, stream } = await client.threads.send(thread.id, "wait please")
        // The run is blocked in the tool now: cut the connection, then let the tool return.
        const chunks = await collect(stream, async (chunk) => {
          if (chunk.type === "tool-input-available") await Effect.runPromise(cutAndOpen)
        })
        return { runId, chunks }
      }
      const { runId, chunks } = yield* Effect.promise(script)
      const replay = yield* streamOf(runId)
      assert.deepStrictEqual<ReadonlyArray<UIMessageChunk>>(chunks, replay.chunks)
      assert.strictEqual(textOf(replay.message), "Waited long enough.")
      const blockedAt = replay.chunks.findIndex((c) => c.type === "tool-input-available") + 1
      assert.deepStrictEqual(proxy.requests(), [
        { method: "POST", path: `/v1/threads/${thread.id}/messages`, lastEventId: undefined },
        { method: "GET", path: `/v1/runs/${runId}/stream`, lastEventId: String(blockedAt) }
      ])
    }).pipe(Effect.scoped))

  it.effect("an approval: the stream follows the parked run; the pending interaction is approved and the same stream goes on", () =>
    Effect.gen(function*() {
      const { url } = yield* Service
      const { thread } = yield* gatedAgent("clientgated", { approval: "always" })
      const script = async () => {
        const client = createClient({ baseUrl: url, apiKey: TestServer.Keys.a })
        const { runId } = await client.runs.start({ threadId: thread.id, input: "park please" })
        const pending: Array<string> = []
        const chunks = await collect(client.runs.stream(runId, { followParks: true }), async (chunk) => {
          if (chunk.type !== "data-svc-input-requested") return
          const page = await client.interactions.list({ runId, status: "pending" })
          for (const interaction of page.data) {
            pending.push(`${interaction.kind} ${interaction.toolName}`)
            await client.interactions.resolve(interaction.id, {
              inputResponses: [{ requestId: interaction.id, optionId: "approve" }]
            })
          }
        })
        return { runId, chunks, pending, run: await client.runs.get(runId) }
      }
      const { runId, chunks, pending, run } = yield* Effect.promise(script)
      assert.deepStrictEqual(pending, ["approval_request mcp__clientgated__echo"])
      assert.strictEqual(run.status, "completed")
      const replay = yield* streamOf(runId)
      assert.deepStrictEqual<ReadonlyArray<UIMessageChunk>>(chunks, replay.chunks)
      assert.deepStrictEqual(chunks.at(-1), { type: "finish", finishReason: "stop" })
      assert.strictEqual(textOf(replay.message), "Parked and back.")
    }).pipe(Effect.scoped))

  it.effect("failures are typed: the envelope as a ServiceError; a refused input, an unreachable service as a ClientError", () =>
    Effect.gen(function*() {
      const { url } = yield* Service
      const port = yield* TestServer.freePort
      const script = async () => {
        const client = createClient({ baseUrl: url, apiKey: TestServer.Keys.a })
        const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (e: unknown) => e)
        return {
          missing: await failure(client.agents.get("agent_doesnotexist")),
          unauthorized: await failure(createClient({ baseUrl: url, apiKey: "sk_wrong" }).agents.list()),
          // A stream that cannot start fails the same way, where the script reads it.
          streamMissing: await failure(collect(client.runs.stream("run_doesnotexist"))),
          badInput: await failure(client.agents.create({ band: "core", contxt: "typo" } as never)),
          badId: await failure(client.runs.get("not-a-run")),
          unreachable: await failure(createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "k" }).agents.list())
        }
      }
      const r = yield* Effect.promise(script)
      for (
        const [error, status, type, code] of [
          [r.missing, 404, "not_found", "agent_not_found"],
          [r.unauthorized, 401, "authentication_error", "invalid_api_key"],
          [r.streamMissing, 404, "not_found", "run_not_found"]
        ] as const
      ) {
        assert.instanceOf(error, ServiceError)
        assert.deepInclude(error, { status, type, code })
        assert.match(error.request_id, TestServer.requestIdShape)
      }
      assert.instanceOf(r.badInput, ClientError)
      assert.strictEqual(r.badInput.kind, "invalid_request")
      assert.match(r.badInput.message, /^Invalid agent: .*contxt/s)
      assert.instanceOf(r.badId, ClientError)
      assert.strictEqual(r.badId.kind, "invalid_request")
      assert.match(r.badId.message, /must be an id starting with 'run_'/)
      assert.instanceOf(r.unreachable, ClientError)
      assert.strictEqual(r.unreachable.kind, "connection")
    }))
  it.effect("files: an upload as multipart, then listed, described, read back byte for byte and deleted; refusals typed", () =>
    Effect.gen(function*() {
      const { url } = yield* Service
      const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3])
      const script = async () => {
        const client = createClient({ baseUrl: url, apiKey: TestServer.Keys.a })
        const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (e: unknown) => e)
        const note = await client.files.upload("plain words", { filename: "note.txt", mediaType: "text/plain" })
        const image = await client.files.upload(bytes, { filename: "pixel.png" })
        const listed = await client.files.list({ limit: 10 })
        const described = await client.files.get(image.id)
        const content = await client.files.content(image.id)
        const deleted = await client.files.delete(note.id)
        return {
          note,
          image,
          listed: listed.data.map((f) => f.id),
          described,
          content,
          deleted,
          gone: await failure(client.files.get(note.id)),
          noName: await failure(client.files.upload(bytes, { filename: "" })),
          badId: await failure(client.files.content("art_x"))
        }
      }
      const r = yield* Effect.promise(script)
      assert.deepInclude(r.note, { filename: "note.txt", mediaType: "text/plain", bytes: 11 })
      // No media type given: the service sniffs the PNG signature.
      assert.deepInclude(r.image, { filename: "pixel.png", mediaType: "image/png", bytes: bytes.length })
      // Both were stored at the same (test) instant: newest-first cannot order them.
      assert.sameMembers(r.listed, [r.image.id, r.note.id])
      assert.deepStrictEqual(r.described, r.image)
      assert.deepStrictEqual([...r.content], [...bytes])
      assert.deepInclude(r.deleted, { id: r.note.id, deleted: true })
      assert.instanceOf(r.gone, ServiceError)
      assert.deepInclude(r.gone, { status: 404, code: "file_not_found" })
      assert.instanceOf(r.noName, ClientError)
      assert.deepInclude(r.noName, { kind: "invalid_request", message: "Invalid upload: filename must not be empty." })
      assert.instanceOf(r.badId, ClientError)
      assert.match(r.badId.message, /must be an id starting with 'file_'/)
    }))
})

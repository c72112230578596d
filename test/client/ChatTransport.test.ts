/**
 * The client's `ChatTransport` driven by the AI SDK's own chat logic
 * (`AbstractChat`, which React's `useChat` wraps; only the React state is
 * replaced by a plain array): a message answered into the chat, an approval
 * answered while the chat follows the parked run, `reconnectToStream`
 * replaying a run the transport did not see end (null once it ended), and the
 * requests the transport refuses rather than ignore.
 */
import { assert } from "@effect/vitest"
import { ClientError, createClient } from "agent-service/client"
import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, readUIMessageStream, type UIMessage } from "ai"
import { Context, Effect, Layer, Option } from "effect"
import { aimock, redactedKey } from "../support/Aimock.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, textOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"

class ArrayState implements ChatState<UIMessage> {
  status: ChatStatus = "ready"
  error: Error | undefined = undefined
  messages: Array<UIMessage> = []
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message]
  }
  popMessage = () => {
    this.messages = this.messages.slice(0, -1)
  }
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m))
  }
  snapshot = <T>(thing: T): T => structuredClone(thing)
}

/** What `useChat` runs, without React. */
class Chat extends AbstractChat<UIMessage> {
  constructor(init: Omit<ChatInit<UIMessage>, "messages">) {
    super({ ...init, state: new ArrayState() })
  }
}

const Model = Layer.unwrap(
  Effect.gen(function*() {
    const peer = yield* aimock((mock) => {
      mock.onMessage("hello", { content: "Hi there, friend!" }, { chunkSize: 5 })
      mock.on({ userMessage: "park please", hasToolResult: false }, {
        toolCalls: [{ id: "call_c", name: "mcp__chatgate__echo", arguments: JSON.stringify({ text: "approved" }) }]
      })
      mock.onToolResult("call_c", { content: "Parked and back." })
      mock.on({ userMessage: "park again", hasToolResult: false }, {
        toolCalls: [{ id: "call_r", name: "mcp__replaygate__echo", arguments: JSON.stringify({ text: "approved" }) }]
      })
      mock.onToolResult("call_r", { content: "Replayed to the end." })
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

class Service extends Context.Service<Service, { readonly url: string }>()("test/Service") {}
const Harness = Layer.effect(Service)(Effect.map(TestServer.TestApi, (api) => ({ url: api.url }))).pipe(
  Layer.provideMerge(Model)
)

const client = Effect.map(Service, ({ url }) => createClient({ baseUrl: url, apiKey: TestServer.Keys.a }))

/** A thread whose agent has the gate MCP server as `name`; its `echo` needs approval. */
const gatedThread = (name: string) =>
  Effect.gen(function*() {
    const gate = yield* gateServer
    const server = yield* Collection.toolServers.create({ name, transport: "http", url: gate.url, approval: "always" })
    return (yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })).thread
  })

const toolOutputs = (message: UIMessage | undefined) =>
  (message?.parts ?? []).flatMap((p) => ("output" in p && p.state === "output-available" ? [p.output] : []))

TestServer.suiteWith(Harness)("client: the ChatTransport under useChat's chat logic", (it) => {
  it.effect("sendMessage: the answer streams into the chat; nothing to reconnect to once it ended", () =>
    Effect.gen(function*() {
      const c = yield* client
      const { thread } = yield* agentWithThread()
      const transport = c.chatTransport()
      const reconnect = yield* Effect.promise(async () => {
        const chat = new Chat({ id: thread.id, transport })
        await chat.sendMessage({ text: "hello" })
        assert.strictEqual(chat.status, "ready")
        assert.deepStrictEqual(chat.messages.map((m) => m.role), ["user", "assistant"])
        assert.strictEqual(textOf(chat.messages[1]), "Hi there, friend!")
        return transport.reconnectToStream({ chatId: thread.id })
      })
      assert.isNull(reconnect)
    }))

  it.effect("an approval while the chat streams: answered through the client, the same response goes on to the answer", () =>
    Effect.gen(function*() {
      const c = yield* client
      const thread = yield* gatedThread("chatgate")
      const approved: Array<string> = []
      const last = yield* Effect.promise(async () => {
        let answering: Promise<unknown> = Promise.resolve()
        const chat = new Chat({
          id: thread.id,
          transport: c.chatTransport(),
          onData: (part) => {
            if (part.type !== "data-svc-input-requested") return
            answering = c.interactions.list({ status: "pending" }).then((page) =>
              Promise.all(
                page.data.filter((i) => i.threadId === thread.id).map((i) => {
                  approved.push(i.toolName)
                  return c.interactions.resolve(i.id, { inputResponses: [{ requestId: i.id, optionId: "approve" }] })
                })
              )
            )
          }
        })
        await chat.sendMessage({ text: "park please" })
        await answering
        assert.strictEqual(chat.status, "ready")
        return chat.lastMessage
      })
      assert.deepStrictEqual(approved, ["mcp__chatgate__echo"])
      assert.strictEqual(textOf(last), "Parked and back.")
      assert.deepStrictEqual(toolOutputs(last), [[{ type: "text", text: "approved" }]])
    }).pipe(Effect.scoped))

  it.effect("reconnectToStream replays the newest run of the thread from its start until its end, then has nothing more", () =>
    Effect.gen(function*() {
      const c = yield* client
      const thread = yield* gatedThread("replaygate")
      const result = yield* Effect.promise(async () => {
        const { runId } = await c.runs.start({ threadId: thread.id, input: "park again" })
        // Read up to the park: the run now waits for its approval.
        for await (const _ of c.runs.stream(runId)) { /* the turn up to the park */ }
        const transport = c.chatTransport()
        const replay = await transport.reconnectToStream({ chatId: thread.id })
        if (replay === null) throw new Error("expected the parked run's stream")
        const [interaction] = (await c.interactions.list({ runId, status: "pending" })).data
        await c.interactions.resolve(interaction.id, {
          inputResponses: [{ requestId: interaction.id, optionId: "approve" }]
        })
        let message: UIMessage | undefined
        for await (const snapshot of readUIMessageStream({ stream: replay })) message = snapshot
        return {
          message,
          afterEnd: await transport.reconnectToStream({ chatId: thread.id }),
          fresh: await c.chatTransport().reconnectToStream({ chatId: thread.id })
        }
      })
      assert.strictEqual(textOf(result.message), "Replayed to the end.")
      assert.isNull(result.afterEnd)
      assert.isNull(result.fresh)
    }).pipe(Effect.scoped))

  it.effect("refused, not ignored: regenerating, a file part, request headers", () =>
    Effect.gen(function*() {
      const c = yield* client
      const { thread } = yield* agentWithThread()
      const transport = c.chatTransport()
      const user = (parts: UIMessage["parts"]): UIMessage => ({ id: "m1", role: "user", parts })
      const base = { chatId: thread.id, messageId: undefined, abortSignal: undefined }
      const failures = yield* Effect.promise(() =>
        Promise.all([
          transport.sendMessages({
            ...base,
            trigger: "regenerate-message",
            messages: [user([{ type: "text", text: "hi" }])]
          }),
          transport.sendMessages({
            ...base,
            trigger: "submit-message",
            messages: [user([{ type: "file", mediaType: "image/png", url: "data:image/png;base64,AA==" }])]
          }),
          transport.sendMessages({
            ...base,
            trigger: "submit-message",
            messages: [user([{ type: "text", text: "hi" }])],
            headers: { "x-a": "1" }
          })
        ].map((p) => p.then(() => undefined, (e: unknown) => e)))
      )
      const messages = failures.map((e) => {
        assert.instanceOf(e, ClientError)
        assert.strictEqual(e.kind, "invalid_request")
        return e.message
      })
      assert.deepStrictEqual(messages, [
        "Regenerating is not supported: the thread holds the history; send a new message instead.",
        "A 'file' part cannot be sent: the transport sends text (upload files through the API).",
        "Request headers are not sent by this transport: the client holds the API key."
      ])
    }))
})

/**
 * The client's `ChatTransport` driven by the AI SDK's own chat logic
 * (`AbstractChat`, which React's `useChat` wraps; only the React state is
 * replaced by a plain array): a message answered into the chat, a chat
 * reloaded from the thread's history that goes on, an approval
 * answered while the chat follows the parked run, `reconnectToStream`
 * replaying a run the transport did not see end (null once it ended), and the
 * requests the transport refuses rather than ignore.
 */
import { assert } from "@effect/vitest"
import { ClientError, createClient } from "agent-service/client"
import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, readUIMessageStream, type UIMessage } from "ai"
import { Context, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { aimock, redactedKey } from "../support/Aimock.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, textOf } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as TestServer from "../support/TestServer.ts"

class ArrayState implements ChatState<UIMessage> {
  status: ChatStatus = "ready"
  error: Error | undefined = undefined
  messages: Array<UIMessage>
  constructor(messages: Array<UIMessage> = []) {
    this.messages = messages
  }
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

/** What `useChat` runs, without React; `messages`: what the chat starts from. */
class Chat extends AbstractChat<UIMessage> {
  constructor({ messages, ...init }: ChatInit<UIMessage>) {
    super({ ...init, state: new ArrayState(messages) })
  }
}

const Model = Layer.unwrap(
  Effect.gen(function*() {
    const peer = yield* aimock((mock) => {
      mock.onMessage("hello", { content: "Hi there, friend!" }, { chunkSize: 5 })
      mock.onMessage("after the reload", { content: "Still here." })
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

  it.effect("after a reload the chat starts from the thread's history (threads.history) and goes on", () =>
    Effect.gen(function*() {
      const c = yield* client
      const { thread } = yield* agentWithThread()
      const first = yield* Effect.promise(async () => {
        const chat = new Chat({ id: thread.id, transport: c.chatTransport() })
        await chat.sendMessage({ text: "hello" })
        return chat.messages
      })
      // The next run a second later, so the thread's two runs are in order.
      yield* TestClock.adjust("1 second")
      const chats = yield* Effect.promise(async () => {
        const history = await c.threads.history(thread.id)
        // A new page: the chat starts from the thread's history. Only an output-error part's optional
        // input keeps the history's type from being the SDK's UIMessage, hence the cast.
        const reloaded = new Chat({
          id: thread.id,
          transport: c.chatTransport(),
          messages: [...history] as Array<UIMessage>
        })
        const start = reloaded.messages
        await reloaded.sendMessage({ text: "after the reload" })
        return { first, history, start, after: reloaded.messages, again: await c.threads.history(thread.id) }
      })
      const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value))
      // The history is the chat as useChat held it: the user's parts as sent, the assistant's message by the run's id.
      assert.deepStrictEqual(chats.history.map((m) => m.role), ["user", "assistant"])
      assert.deepStrictEqual(json(chats.history[0].parts), json(chats.first[0].parts))
      assert.strictEqual(chats.history[1].id, chats.first[1].id)
      assert.deepStrictEqual(json(chats.history[1].parts), json(chats.first[1].parts))
      assert.deepStrictEqual(json(chats.start), json(chats.history))
      assert.strictEqual(chats.after.length, 4)
      assert.deepStrictEqual(json(chats.after.slice(0, 2)), json(chats.history))
      assert.strictEqual(textOf(chats.after[3]), "Still here.")
      assert.deepStrictEqual(chats.again.map((m) => m.id).slice(0, 2), chats.history.map((m) => m.id))
      assert.strictEqual(chats.again[3].id, chats.after[3].id)
      assert.deepStrictEqual(json(chats.again[3].parts), json(chats.after[3].parts))
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

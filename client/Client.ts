/**
 * The Promise client, for code that does not use Effect:
 *
 *   const client = createClient({ baseUrl, apiKey })
 *   const agent = await client.agents.create({ context: "You are concise." })
 *   for await (const chunk of client.runs.stream(runId)) ...
 *
 * Inputs are plain JSON as the README's curl examples write them, checked
 * against the contract before they are sent; answers are the contract's
 * decoded resources. Every method rejects with a `ServiceError` (the
 * service's envelope) or a `ClientError`. Streams are `ReadableStream`s of
 * AI SDK UI message chunks (async-iterable, and what `readUIMessageStream`
 * takes) that resume after a disconnect by themselves. `call` reaches any
 * route of the contract through the typed Effect client.
 */
import { Context, Effect, Stream } from "effect"
import { AgentCreate } from "../domain/Agent.ts"
import type { Chunk } from "../domain/Chunk.ts"
import type { InteractionKind, InteractionStatus } from "../domain/Interaction.ts"
import { ResolveInteractionBody } from "../domain/Interaction.ts"
import { MessageInput, RunStartInput, type RunStatus } from "../domain/Run.ts"
import { ThreadCreate } from "../domain/Thread.ts"
import { type ChatTransportOptions, makeChatTransport, type ServiceChatTransport } from "./ChatTransport.ts"
import { type Failure, normalized } from "./Failures.ts"
import { filesClient } from "./FilesClient.ts"
import { checked, filters, ids, type PageOptions, pageQuery } from "./Inputs.ts"
import * as RunEvents from "./RunEvents.ts"
import { type ApiClient, type ConnectionOptions, makeServiceClient } from "./ServiceClient.ts"
import { allMessages, messagesPage } from "./ThreadHistory.ts"

const agentCreate = checked(AgentCreate, "agent")
const threadCreate = checked(ThreadCreate, "thread")
const runStart = checked(RunStartInput, "run")
const messageInput = checked(MessageInput, "message")
const resolveBody = checked(ResolveInteractionBody, "resolution")

const idempotency = (key: string | undefined) => (key === undefined ? {} : { "idempotency-key": key })

export const createClient = (options: ConnectionOptions) => {
  // Building the typed client is synchronous (it walks the contract); it holds no connection.
  const api: ApiClient = Effect.runSync(makeServiceClient(options))
  const run = <A>(effect: Effect.Effect<A, unknown>): Promise<A> => Effect.runPromise(normalized(effect))
  const stream = <A>(events: Stream.Stream<A, Failure>, signal?: AbortSignal): ReadableStream<A> =>
    Stream.toReadableStreamWith(events, Context.empty(), { signal })

  const followChunks = (runId: string, follow: RunEvents.FollowOptions = {}): Stream.Stream<Chunk, Failure> =>
    Stream.unwrap(Effect.map(ids.run(runId), (id) => RunEvents.chunks(RunEvents.follow(api, id, follow))))

  const sendMessage = (
    threadId: string,
    input: string | typeof MessageInput.Encoded,
    send: RunEvents.SendOptions = {}
  ) =>
    Effect.gen(function*() {
      const id = yield* ids.thread(threadId)
      const body = yield* messageInput(typeof input === "string" ? { input } : input)
      const { runId, events } = yield* RunEvents.send(api, id, body, send)
      return { runId, chunks: RunEvents.chunks(events) }
    })

  return {
    agents: {
      list: (page: PageOptions = {}) => run(Effect.flatMap(pageQuery(page), (query) => api.agents.list({ query }))),
      create: (body: typeof AgentCreate.Encoded, idempotencyKey?: string) =>
        run(
          Effect.flatMap(agentCreate(body), (payload) =>
            api.agents.create({ payload, headers: idempotency(idempotencyKey) }))
        ),
      get: (id: string) => run(Effect.flatMap(ids.agent(id), (agentId) => api.agents.get({ params: { id: agentId } })))
    },
    threads: {
      create: (body: typeof ThreadCreate.Encoded, idempotencyKey?: string) =>
        run(
          Effect.flatMap(threadCreate(body), (payload) =>
            api.threads.create({ payload, headers: idempotency(idempotencyKey) }))
        ),
      get: (id: string) =>
        run(Effect.flatMap(ids.thread(id), (threadId) => api.threads.get({ params: { id: threadId } }))),
      /** Sends a message and answers with the new run's id and its stream (from the same response). */
      send: (threadId: string, input: string | typeof MessageInput.Encoded, send: RunEvents.SendOptions = {}) =>
        run(Effect.map(sendMessage(threadId, input, send), ({ runId, chunks }) => ({ runId, stream: stream(chunks) }))),
      /** A page of the thread's messages as the AI SDK's `UIMessage`s, oldest first. */
      messages: (threadId: string, page: PageOptions = {}) => run(messagesPage(api, threadId, page)),
      /** Every message of the thread, oldest first: what `useChat({ messages })` starts from after a reload. */
      history: (threadId: string) => run(allMessages(api, threadId))
    },
    runs: {
      start: (body: typeof RunStartInput.Encoded) =>
        run(Effect.flatMap(runStart(body), (payload) => api.runs.start({ payload, headers: {} }))),
      get: (id: string) => run(Effect.flatMap(ids.run(id), (runId) => api.runs.get({ params: { id: runId } }))),
      list: (
        query: PageOptions & { readonly agentId?: string; readonly threadId?: string; readonly status?: RunStatus } = {}
      ) =>
        run(Effect.gen(function*() {
          const page = yield* pageQuery(query)
          const agentId = yield* filters.agentId(query.agentId)
          const threadId = yield* filters.threadId(query.threadId)
          const status = yield* filters.runStatus(query.status)
          return yield* api.runs.list({
            query: {
              ...page,
              ...(agentId === undefined ? {} : { agentId }),
              ...(threadId === undefined ? {} : { threadId }),
              ...(status === undefined ? {} : { status })
            }
          })
        })),
      cancel: (id: string) =>
        run(Effect.flatMap(ids.run(id), (runId) => api.runs.cancel({ params: { id: runId }, headers: {} }))),
      /** The run's chunks, resumed after disconnects; `followParks` keeps following through approvals and questions. */
      stream: (runId: string, follow: RunEvents.FollowOptions & { readonly signal?: AbortSignal } = {}) =>
        stream(followChunks(runId, follow), follow.signal)
    },
    interactions: {
      list: (
        query: PageOptions & {
          readonly runId?: string
          readonly status?: InteractionStatus
          readonly kind?: InteractionKind
        } = {}
      ) =>
        run(Effect.gen(function*() {
          const page = yield* pageQuery(query)
          const runId = yield* filters.runId(query.runId)
          const status = yield* filters.interactionStatus(query.status)
          const kind = yield* filters.interactionKind(query.kind)
          return yield* api.interactions.list({
            query: {
              ...page,
              ...(runId === undefined ? {} : { runId }),
              ...(status === undefined ? {} : { status }),
              ...(kind === undefined ? {} : { kind })
            }
          })
        })),
      get: (id: string) =>
        run(
          Effect.flatMap(
            ids.interaction(id),
            (interactionId) => api.interactions.get({ params: { id: interactionId } })
          )
        ),
      resolve: (id: string, body: typeof ResolveInteractionBody.Encoded) =>
        run(Effect.gen(function*() {
          const interactionId = yield* ids.interaction(id)
          const payload = yield* resolveBody(body)
          return yield* api.interactions.resolve({ params: { id: interactionId }, payload, headers: {} })
        }))
    },
    files: filesClient(api, run),
    /** A `ChatTransport` for the AI SDK's `useChat`: the chat id is the thread id. */
    chatTransport: (transport: ChatTransportOptions = {}): ServiceChatTransport =>
      makeChatTransport({
        send: (threadId, input) => sendMessage(threadId, input, { followParks: true }),
        newestRun: (threadId) =>
          Effect.flatMap(ids.thread(threadId), (id) =>
            normalized(Effect.map(api.runs.list({ query: { threadId: id, limit: 1 } }), (page) => page.data[0]))),
        replay: (runId) =>
          RunEvents.chunks(RunEvents.follow(api, runId, { followParks: true })),
        readable: stream
      }, transport),
    /** Any route of the contract, through the typed Effect client: `client.call((api) => api.secrets.list({ query: {} }))`. */
    call: <A, E>(f: (api: ApiClient) => Effect.Effect<A, E>): Promise<A> => run(f(api))
  }
}

export type Client = ReturnType<typeof createClient>

/**
 * The AI SDK's `ChatTransport` (what `useChat` sends through) over the
 * service, written against the interface's shape so this module needs no
 * `ai` import: the chat id is the thread id, a sent message starts a run on
 * the thread, and the chat reads the run's own stream to its final end,
 * through approvals and questions (answer them with `interactions.resolve`:
 * the same stream goes on). The thread keeps the history, so only the last
 * user message's text is sent. `reconnectToStream` replays the thread's
 * newest run from its start (`resumeStreamIsReplay`) unless it ended and this
 * transport saw its end.
 */
import { Effect, Schema, Stream } from "effect"
import { type Chunk, isFinalEnd } from "../domain/Chunk.ts"
import type { RunId } from "../domain/Ids.ts"
import { isTerminal, type MessageInput, type Run } from "../domain/Run.ts"
import { ClientError, type Failure } from "./Failures.ts"

type MessageBody = typeof MessageInput.Encoded

/** The part of the AI SDK's `UIMessage` the transport reads. */
export interface ChatMessageLike {
  readonly role: string
  readonly parts: ReadonlyArray<{ readonly type: string }>
}

export interface SendMessagesOptions {
  readonly trigger: "submit-message" | "regenerate-message"
  readonly chatId: string
  readonly messageId: string | undefined
  readonly messages: ReadonlyArray<ChatMessageLike>
  readonly abortSignal: AbortSignal | undefined
  /** Run options (`band`, `streamReasoning`, `metadata`, ...), merged over the transport's. */
  readonly body?: object | undefined
  readonly headers?: Record<string, string> | Headers | undefined
  readonly metadata?: unknown
}

export interface ReconnectOptions {
  readonly chatId: string
  readonly abortSignal?: AbortSignal | undefined
  readonly body?: object | undefined
  readonly headers?: Record<string, string> | Headers | undefined
  readonly metadata?: unknown
}

export interface ServiceChatTransport {
  readonly resumeStreamIsReplay: true
  readonly sendMessages: (options: SendMessagesOptions) => Promise<ReadableStream<Chunk>>
  readonly reconnectToStream: (options: ReconnectOptions) => Promise<ReadableStream<Chunk> | null>
}

export interface ChatTransportOptions {
  /** Run options sent with every message (`{ streamReasoning: true }`, ...). */
  readonly body?: Omit<MessageBody, "input"> | undefined
}

/** What the transport needs of the client. */
export interface TransportDeps {
  readonly send: (
    threadId: string,
    input: MessageBody
  ) => Effect.Effect<{ readonly runId: RunId; readonly chunks: Stream.Stream<Chunk, Failure> }, Failure>
  readonly newestRun: (threadId: string) => Effect.Effect<Run | undefined, Failure>
  readonly replay: (runId: RunId) => Stream.Stream<Chunk, Failure>
  readonly readable: (chunks: Stream.Stream<Chunk, Failure>, signal: AbortSignal | undefined) => ReadableStream<Chunk>
}

const refuse = (message: string) => Effect.fail(new ClientError({ kind: "invalid_request", message }))

const isTextPart = Schema.is(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }))

/** The text of the last message, which must be the user's and hold text only. */
const lastUserText = (messages: ReadonlyArray<ChatMessageLike>) => {
  const last = messages.at(-1)
  if (last === undefined || last.role !== "user") {
    return refuse("The last chat message must be the user's message to send.")
  }
  const texts: Array<string> = []
  for (const part of last.parts) {
    if (!isTextPart(part)) {
      return refuse(`A '${part.type}' part cannot be sent: the transport sends text (upload files through the API).`)
    }
    texts.push(part.text)
  }
  return Effect.succeed(texts.join("\n"))
}

const hasHeaders = (headers: SendMessagesOptions["headers"]) =>
  headers !== undefined &&
  (headers instanceof Headers ? [...headers.keys()].length > 0 : Object.keys(headers).length > 0)

const unsupported = (options: ReconnectOptions) => {
  if (hasHeaders(options.headers)) {
    return refuse("Request headers are not sent by this transport: the client holds the API key.")
  }
  if (options.metadata !== undefined) {
    return refuse("Request metadata is not sent by this transport: put run metadata in body.metadata.")
  }
  return Effect.void
}

export const makeChatTransport = (deps: TransportDeps, options: ChatTransportOptions = {}): ServiceChatTransport => {
  /** Per chat (thread): the run this transport last streamed, and whether it saw that run's final end. */
  const seen = new Map<string, { readonly runId: RunId; finished: boolean }>()

  const watched = (chatId: string, runId: RunId, chunks: Stream.Stream<Chunk, Failure>) => {
    const entry = { runId, finished: false }
    seen.set(chatId, entry)
    return Stream.tap(chunks, (chunk) => Effect.sync(() => (entry.finished ||= isFinalEnd(chunk))))
  }

  return {
    resumeStreamIsReplay: true,
    sendMessages: (request) =>
      Effect.runPromise(Effect.gen(function*() {
        yield* unsupported(request)
        if (request.trigger === "regenerate-message") {
          return yield* refuse(
            "Regenerating is not supported: the thread holds the history; send a new message instead."
          )
        }
        const text = yield* lastUserText(request.messages)
        const { runId, chunks } = yield* deps.send(request.chatId, { ...options.body, ...request.body, input: text })
        return deps.readable(watched(request.chatId, runId, chunks), request.abortSignal)
      })),
    reconnectToStream: (request) =>
      Effect.runPromise(Effect.gen(function*() {
        yield* unsupported(request)
        const newest = yield* deps.newestRun(request.chatId)
        if (newest === undefined) return null
        const known = seen.get(request.chatId)
        const sawIt = known !== undefined && known.runId === newest.id
        if (isTerminal(newest.status) && (!sawIt || known.finished)) return null
        return deps.readable(watched(request.chatId, newest.id, deps.replay(newest.id)), request.abortSignal)
      }))
  }
}

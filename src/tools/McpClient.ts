/**
 * MCP client connections through `@modelcontextprotocol/sdk`, over Streamable
 * HTTP or legacy HTTP+SSE, always through the guarded outbound fetch (so
 * redirects and DNS answers are re-checked), with bearer auth when the server
 * has it, and bounded by the server's requestTimeoutMs.
 *
 * A connection can outlive the run that opened it (see McpSessions), so the
 * per-run headers (Svc-Run-Id, Svc-Root-Run-Id) are not part of the
 * connection: each operation passes its own, and the fetch the transport uses
 * adds them to every HTTP request the SDK sends on that operation's behalf
 * (found through an AsyncLocalStorage entered around the SDK call).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js"
import type { jsonSchemaValidator, JsonSchemaValidatorResult } from "@modelcontextprotocol/sdk/validation"
import { Data, Duration, Effect, type Scope } from "effect"
import { AsyncLocalStorage } from "node:async_hooks"
import { errorText } from "../ErrorText.ts"
import type { GuardedFetch } from "../outbound/Outbound.ts"

export class McpFailure extends Data.TaggedError("McpFailure")<{
  readonly message: string
  /**
   * The request never reached a live session: the server forgot the session
   * (404, or 400 from servers that answer so for an unknown session id) or
   * refused the connection. Nothing ran, so the request may be sent again on a
   * new session.
   */
  readonly sessionGone: boolean
  /** What failed underneath, kept for the logs. */
  readonly cause?: unknown
}> {}

export type HeaderMap = Readonly<Record<string, string>>

export interface McpTarget {
  readonly transport: "http" | "sse"
  readonly url: string
  /** Headers of the connection itself, sent on every request (Authorization). */
  readonly headers: HeaderMap
  readonly timeoutMs: number
}

export interface OpenOptions {
  /** Headers for the requests of the handshake (the opening run's Svc-* headers). */
  readonly requestHeaders?: HeaderMap
  /** The server announced notifications/tools/list_changed. */
  readonly onToolsChanged?: () => void
  /** The transport failed or closed after the handshake (server gone, session expired, stream lost). */
  readonly onBroken?: () => void
}

const clientInfo = { name: "agent-service", version: "1.0.0" }

const requestHeaders = new AsyncLocalStorage<HeaderMap>()

/** Adds the headers of the operation under way (if any) to every request. */
const withRequestHeaders = (fetch: GuardedFetch): GuardedFetch => (url, init) => {
  const extra = requestHeaders.getStore()
  if (extra === undefined) return fetch(url, init)
  const headers = new Headers(init?.headers)
  for (const [name, value] of Object.entries(extra)) headers.set(name, value)
  return fetch(url, { ...init, headers })
}

/** Runs an SDK call so that the HTTP requests it sends carry `headers`. */
const within = <A>(headers: HeaderMap | undefined, f: () => Promise<A>): Promise<A> =>
  headers === undefined ? f() : requestHeaders.run(headers, f)

const isSessionGone = (cause: unknown): boolean => {
  if (cause instanceof StreamableHTTPError) return cause.code === 404 || cause.code === 400
  if (!(cause instanceof Error)) return false
  // Legacy HTTP+SSE: the POST endpoint of a session the server no longer has.
  if (/^Error POSTing to endpoint \(HTTP 40[04]\)/.test(cause.message)) return true
  // undici: `fetch failed` with the socket error as its cause.
  const inner: unknown = cause.cause
  return typeof inner === "object" && inner !== null && "code" in inner && inner.code === "ECONNREFUSED"
}

const failure = (message: string, cause: unknown) =>
  new McpFailure({ message, sessionGone: isSessionGone(cause), cause })

const bounded = <A>(effect: Effect.Effect<A, McpFailure>, timeoutMs: number, message: string) =>
  effect.pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(timeoutMs),
      orElse: () => Effect.fail(new McpFailure({ message, sessionGone: false }))
    })
  )

/**
 * The SDK compiles every advertised `outputSchema` with its own Ajv and validates structured
 * content on this thread, with backtracking patterns: a tenant's server could hold the
 * service. Its validation is switched off here (its check that such a tool returns
 * structured content stays); McpTools validates structured content in the validation worker.
 */
const outputsValidatedElsewhere: jsonSchemaValidator = {
  getValidator: <T>() => (input: unknown): JsonSchemaValidatorResult<T> => ({
    valid: true,
    data: input as T,
    errorMessage: undefined
  })
}

/** Connects and performs the initialize handshake; the caller ends it with `close`. */
export const open = (
  fetch: GuardedFetch,
  target: McpTarget,
  options: OpenOptions = {}
): Effect.Effect<Client, McpFailure> =>
  bounded(
    Effect.tryPromise({
      try: async (signal) => {
        const transportOptions = {
          fetch: withRequestHeaders(fetch),
          requestInit: { headers: { ...target.headers } },
          redirectPolicy: "follow" as const
        }
        const transport = target.transport === "http"
          ? new StreamableHTTPClientTransport(new URL(target.url), transportOptions)
          : new SSEClientTransport(new URL(target.url), transportOptions)
        const onToolsChanged = options.onToolsChanged
        const client = new Client(clientInfo, {
          jsonSchemaValidator: outputsValidatedElsewhere,
          ...(onToolsChanged === undefined
            ? {}
            : { listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => onToolsChanged() } } })
        })
        // An abandoned handshake (timeout, interruption) leaves nothing open. Silent on purpose: the
        // handshake's own failure is what the caller reports, and this listener runs outside any fiber.
        signal.addEventListener("abort", () => void client.close().catch(() => undefined))
        let connected = false
        // Set before connect: the client chains its own handlers after these.
        transport.onerror = () => {
          if (connected) options.onBroken?.()
        }
        transport.onclose = () => {
          if (connected) options.onBroken?.()
        }
        await within(options.requestHeaders, () => client.connect(transport, { timeout: target.timeoutMs }))
        connected = true
        return client
      },
      catch: (cause) => failure(`MCP handshake with ${target.url} failed: ${errorText(cause)}`, cause)
    }),
    target.timeoutMs,
    `MCP handshake with ${target.url} timed out after ${target.timeoutMs} ms`
  )

/** Ends a connection: Streamable HTTP sessions are ended explicitly (DELETE) so the server can free them. */
export const close = (client: Client, timeoutMs: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    const transport = client.transport
    return transport instanceof StreamableHTTPClientTransport
      ? Effect.tryPromise(() => transport.terminateSession()).pipe(
        Effect.ignore({ log: "Warn", message: "ending the MCP session (DELETE) failed" })
      )
      : Effect.void
  }).pipe(
    Effect.timeoutOrElse({ duration: Duration.millis(timeoutMs), orElse: () => Effect.void }),
    Effect.andThen(
      Effect.tryPromise(() => client.close()).pipe(
        Effect.ignore({ log: "Warn", message: "closing the MCP client failed" })
      )
    )
  )

/** Connects and performs the initialize handshake; closes the session when the scope ends. */
export const connect = (fetch: GuardedFetch, target: McpTarget): Effect.Effect<Client, McpFailure, Scope.Scope> =>
  Effect.acquireRelease(open(fetch, target), (client) => close(client, target.timeoutMs))

/** Every tool the server advertises (following pagination cursors). */
export const listTools = (
  client: Client,
  timeoutMs: number,
  headers?: HeaderMap
): Effect.Effect<ReadonlyArray<Tool>, McpFailure> =>
  bounded(
    Effect.tryPromise({
      try: () =>
        within(headers, async () => {
          const tools: Array<Tool> = []
          let cursor: string | undefined
          for (let page = 0; page < 100; page++) {
            const result = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs })
            tools.push(...result.tools)
            cursor = result.nextCursor
            if (cursor === undefined) break
          }
          return tools
        }),
      catch: (cause) => failure(`tools/list failed: ${errorText(cause)}`, cause)
    }),
    timeoutMs,
    `tools/list timed out after ${timeoutMs} ms`
  )

/** One tools/call; a failure's message is the SDK's (what the model reads after `Error: `). */
export const callTool = (
  client: Client,
  name: string,
  args: Record<string, unknown>,
  timeoutMs: number,
  headers?: HeaderMap
): Effect.Effect<CallToolResult, McpFailure> =>
  Effect.tryPromise({
    try: (signal) =>
      within(headers, () =>
        client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs, signal }) as Promise<
          CallToolResult
        >),
    catch: (cause) =>
      failure(cause instanceof Error ? cause.message : String(cause), cause)
  })

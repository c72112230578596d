/**
 * MCP client connections through `@modelcontextprotocol/sdk`, over Streamable
 * HTTP or legacy HTTP+SSE, always through the guarded outbound fetch (so
 * redirects and DNS answers are re-checked), with bearer auth when the server
 * has it, and bounded by the server's requestTimeoutMs.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import { Data, Duration, Effect, type Scope } from "effect"
import type { GuardedFetch } from "../outbound/Outbound.ts"
import { errorText } from "../ErrorText.ts"

export class McpFailure extends Data.TaggedError("McpFailure")<{ readonly message: string }> {}

export interface McpTarget {
  readonly transport: "http" | "sse"
  readonly url: string
  /** Authorization and Svc-* headers sent on every request. */
  readonly headers: Readonly<Record<string, string>>
  readonly timeoutMs: number
}

const clientInfo = { name: "agent-service", version: "1.0.0" }

/** Connects and performs the initialize handshake; closes the session when the scope ends. */
export const connect = (fetch: GuardedFetch, target: McpTarget): Effect.Effect<Client, McpFailure, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async (signal) => {
        const requestInit: RequestInit = { headers: { ...target.headers }, signal }
        const transport = target.transport === "http"
          ? new StreamableHTTPClientTransport(new URL(target.url), { fetch, requestInit, redirectPolicy: "follow" })
          : new SSEClientTransport(new URL(target.url), { fetch, requestInit, redirectPolicy: "follow" })
        const client = new Client(clientInfo)
        await client.connect(transport, { timeout: target.timeoutMs })
        return client
      },
      catch: (cause) => new McpFailure({ message: `MCP handshake with ${target.url} failed: ${errorText(cause)}` })
    }).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(target.timeoutMs),
        orElse: () => Effect.fail(new McpFailure({ message: `MCP handshake with ${target.url} timed out after ${target.timeoutMs} ms` }))
      })
    ),
    (client) =>
      Effect.promise(async () => {
        // Streamable HTTP sessions are ended explicitly (DELETE), so the server can free them.
        const transport = client.transport
        if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined)
        await client.close().catch(() => undefined)
      })
  )

/** Every tool the server advertises (following pagination cursors). */
export const listTools = (client: Client, timeoutMs: number): Effect.Effect<ReadonlyArray<Tool>, McpFailure> =>
  Effect.tryPromise({
    try: async () => {
      const tools: Array<Tool> = []
      let cursor: string | undefined
      for (let page = 0; page < 100; page++) {
        const result = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs })
        tools.push(...result.tools)
        cursor = result.nextCursor
        if (cursor === undefined) break
      }
      return tools
    },
    catch: (cause) => new McpFailure({ message: `tools/list failed: ${errorText(cause)}` })
  }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(timeoutMs),
      orElse: () => Effect.fail(new McpFailure({ message: `tools/list timed out after ${timeoutMs} ms` }))
    })
  )

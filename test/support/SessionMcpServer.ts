/**
 * A stateful Streamable HTTP MCP server built with the SDK, for the warm
 * session tests: every initialize opens a session (Mcp-Session-Id), DELETE
 * ends one, and a request naming a session the server does not have is 404
 * (spec: the client must start a new session). It records every request
 * (HTTP method, JSON-RPC method, session, Svc-* headers) and can forget its
 * sessions (expiry) or drop every connection as well (a restart).
 *
 * Tools: `echo` returns its text; `add_tool` advertises one more tool and
 * announces notifications/tools/list_changed on the call's own response
 * stream (before the result); `wait` blocks until the test opens the gate.
 * `setTools` changes the list silently (no notification).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Option, Schema, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http"
import { bodyText } from "./HttpPeer.ts"

export interface Seen {
  /** GET, POST or DELETE. */
  readonly http: string
  /** The JSON-RPC method of a POST (undefined for a response or a batch). */
  readonly rpc: string | undefined
  readonly sessionId: string | undefined
  readonly runId: string | undefined
  readonly rootRunId: string | undefined
}

export interface SessionServer {
  readonly url: string
  /** Every request received, in order. */
  readonly seen: () => ReadonlyArray<Seen>
  /** How many sessions were opened (initialize answered). */
  readonly opened: () => number
  /** Session ids ended by DELETE, in order. */
  readonly deleted: () => ReadonlyArray<string>
  /** Completes once a request matching `predicate` has arrived. */
  readonly awaitSeen: (predicate: (seen: Seen) => boolean) => Effect.Effect<void>
  /** Completes once `count` sessions have been ended by DELETE. */
  readonly awaitDeleted: (count: number) => Effect.Effect<void>
  /** Completes once `count` `wait` calls have arrived. */
  readonly awaitWaiting: (count: number) => Effect.Effect<void>
  /** Lets every pending and future `wait` call return. */
  readonly open: Effect.Effect<void>
  /** Replaces the advertised tools without telling anyone. */
  readonly setTools: (names: ReadonlyArray<string>) => Effect.Effect<void>
  /** Forgets every session (later requests naming them are 404); connections stay open. */
  readonly expire: Effect.Effect<void>
  /** Forgets every session and drops every connection, as a restarted process would. */
  readonly restart: Effect.Effect<void>
}

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))
const RpcMethod = Schema.Struct({ method: Schema.String })
const decodeMethod = Schema.decodeUnknownOption(RpcMethod)

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

const textInput = { type: "object" as const, properties: { text: { type: "string" } } }

/** The server on `port` (0: any free port). */
export const sessionServerOn = (port: number): Effect.Effect<SessionServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const seen: Array<Seen> = []
    const sessions = new Map<string, StreamableHTTPServerTransport>()
    const transports = new Set<StreamableHTTPServerTransport>()
    const deleted: Array<string> = []
    let opened = 0
    let waiting = 0
    let tools: Array<string> = ["echo", "add_tool", "wait"]
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const watchers = new Set<() => void>()
    const notify = () => {
      for (const watcher of [...watchers]) watcher()
    }
    const until = (reached: () => boolean) =>
      Effect.callback<void>((resume) => {
        if (reached()) return resume(Effect.void)
        const watcher = () => {
          if (!reached()) return
          watchers.delete(watcher)
          resume(Effect.void)
        }
        watchers.add(watcher)
        return Effect.sync(() => watchers.delete(watcher))
      })

    const makeServer = () => {
      const server = new Server({ name: "sessions", version: "1.0.0" }, {
        capabilities: { tools: { listChanged: true } }
      })
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: tools.map((name) => ({ name, description: `tool ${name}`, inputSchema: textInput }))
      }))
      server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
        const text = typeof request.params.arguments?.["text"] === "string" ? request.params.arguments["text"] : ""
        switch (request.params.name) {
          case "echo":
            return { content: [{ type: "text", text }] }
          case "add_tool":
            tools = [...tools, text]
            await extra.sendNotification({ method: "notifications/tools/list_changed" })
            return { content: [{ type: "text", text: `added ${text}` }] }
          case "wait":
            waiting += 1
            notify()
            await gate
            return { content: [{ type: "text", text: "gate opened" }] }
          default:
            return tools.includes(request.params.name)
              ? { content: [{ type: "text", text: request.params.name }] }
              : { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true }
        }
      })
      return server
    }

    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      const raw = req.method === "POST" ? await bodyText(req) : ""
      const body = req.method === "POST" ? Option.getOrUndefined(decodeJson(raw)) : undefined
      const sessionId = header(req, "mcp-session-id")
      seen.push({
        http: req.method ?? "",
        rpc: Option.getOrUndefined(Option.map(decodeMethod(body), (m) => m.method)),
        sessionId,
        runId: header(req, "svc-run-id"),
        rootRunId: header(req, "svc-root-run-id")
      })
      notify()
      if (sessionId !== undefined) {
        const transport = sessions.get(sessionId)
        if (transport === undefined) {
          res.writeHead(404, { "content-type": "application/json" })
          res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }))
          return
        }
        return transport.handleRequest(req, res, body)
      }
      if (req.method !== "POST") {
        res.writeHead(400, { "content-type": "application/json" })
        res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "No session" }, id: null }))
        return
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport)
          opened += 1
        },
        onsessionclosed: (id) => {
          sessions.delete(id)
          deleted.push(id)
          notify()
        }
      })
      transports.add(transport)
      await makeServer().connect(transport)
      await transport.handleRequest(req, res, body)
    }

    const forget = Effect.sync(() => sessions.clear())
    const http = yield* Effect.acquireRelease(
      Effect.callback<HttpServer>((resume) => {
        const server = createServer((req, res) => {
          handle(req, res).catch(() => {
            if (!res.headersSent) res.writeHead(500)
            res.end()
          })
        })
        server.listen(port, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const address = http.address()
    const bound = typeof address === "object" && address !== null ? address.port : 0
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        release()
        await Promise.all([...transports].map((t) => t.close().catch(() => undefined)))
      })
    )
    return {
      url: `http://127.0.0.1:${bound}/mcp`,
      seen: () => [...seen],
      opened: () => opened,
      deleted: () => [...deleted],
      awaitSeen: (predicate) => until(() => seen.some(predicate)),
      awaitDeleted: (count) => until(() => deleted.length >= count),
      awaitWaiting: (count) => until(() => waiting >= count),
      open: Effect.sync(() => release()),
      setTools: (names) => Effect.sync(() => (tools = [...names])),
      expire: forget,
      restart: Effect.andThen(forget, Effect.sync(() => http.closeAllConnections()))
    }
  })

export const sessionServer = sessionServerOn(0)

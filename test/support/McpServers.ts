/**
 * Real MCP servers for the tool-server tests, each closed with its scope:
 * the reference `@modelcontextprotocol/server-everything` as a child process
 * (Streamable HTTP or legacy HTTP+SSE), SDK servers on node:http (the
 * endpoint every such server shares, and one that demands a bearer token and
 * advertises the tool names a test chooses), and two URLs that are no MCP
 * server: one that records the Authorization it is sent, one that never answers.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { Effect, type Scope } from "effect"
import { spawn } from "node:child_process"
import type { IncomingMessage, ServerResponse } from "node:http"
import { fileURLToPath } from "node:url"
import { listen } from "./HttpPeer.ts"
import { waitForExit } from "./ServiceProcess.ts"
import { freePort } from "./TestServer.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const everythingEntry = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"

/** What server-everything advertises to a client without optional capabilities, in its order. */
export const everythingTools = [
  "echo",
  "get-annotated-message",
  "get-env",
  "get-resource-links",
  "get-resource-reference",
  "get-structured-content",
  "get-sum",
  "get-tiny-image",
  "gzip-file-as-resource",
  "toggle-simulated-logging",
  "toggle-subscriber-updates",
  "trigger-long-running-operation",
  "simulate-research-query"
] as const

export type EverythingTransport = "streamableHttp" | "sse"

/** The line each transport prints once it listens. */
const readyLine: Record<EverythingTransport, RegExp> = {
  streamableHttp: /listening on port \d+/,
  sse: /Server is running on port \d+/
}

const endpoint: Record<EverythingTransport, string> = { streamableHttp: "/mcp", sse: "/sse" }

export interface Running {
  /** The MCP endpoint to register. */
  readonly url: string
}

/** server-everything on a free port; ready once it printed its listening line, killed when the scope closes. */
export const everything = (transport: EverythingTransport): Effect.Effect<Running, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const port = yield* freePort
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [everythingEntry, transport], {
          cwd: root,
          env: { ...process.env, PORT: String(port) },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) =>
        Effect.suspend(() => {
          if (child.exitCode !== null || child.signalCode !== null) return Effect.void
          child.kill("SIGKILL")
          return waitForExit(child)
        })
    )
    yield* Effect.callback<void, Error>((resume) => {
      let out = ""
      const onData = (d: Buffer) => {
        out += d.toString()
        if (readyLine[transport].test(out)) resume(Effect.void)
      }
      child.stdout?.on("data", onData)
      child.stderr?.on("data", onData)
      child.once("exit", (code) => resume(Effect.fail(new Error(`server-everything exited with ${code}:\n${out}`))))
    })
    return { url: `http://127.0.0.1:${port}${endpoint[transport]}` }
  })

// ---- a bearer-protected SDK server -------------------------------------------

/**
 * A stateless Streamable HTTP MCP endpoint on an ephemeral port: every POST is
 * answered (as JSON) by a fresh SDK server from `makeServer`, other methods
 * with 405. `screen` sees each request first and may answer it itself
 * (returning true). A request whose handling throws is answered 500.
 */
export const sdkEndpoint = (
  makeServer: () => McpServer,
  screen: (req: IncomingMessage, res: ServerResponse) => boolean = () => false
): Effect.Effect<number, never, Scope.Scope> => {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (screen(req, res)) return
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" })
      res.end()
      return
    }
    const server = makeServer()
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
    res.on("close", () => {
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    await transport.handleRequest(req, res)
  }
  return listen((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500)
      res.end()
    })
  })
}

export interface BearerServer extends Running {
  /** The Authorization header of every request received (null when absent), in order. */
  readonly authorizations: () => ReadonlyArray<string | null>
}

/**
 * A stateless Streamable HTTP MCP server built with the SDK that answers 401
 * unless `Authorization: Bearer <token>` is sent, advertising `tools`.
 */
export const bearerServer = (
  token: string,
  tools: ReadonlyArray<string>
): Effect.Effect<BearerServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const seen: Array<string | null> = []
    const port = yield* sdkEndpoint(
      () => {
        const server = new McpServer({ name: "bearer-test", version: "1.0.0" })
        for (const name of tools) {
          server.registerTool(
            name,
            { description: `tool ${name}` },
            () => ({ content: [{ type: "text", text: name }] })
          )
        }
        return server
      },
      (req, res) => {
        seen.push(req.headers.authorization ?? null)
        if (req.headers.authorization === `Bearer ${token}`) return false
        res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" })
        res.end(JSON.stringify({ error: "unauthorized" }))
        return true
      }
    )
    return { url: `http://127.0.0.1:${port}/mcp`, authorizations: () => [...seen] }
  })

// ---- a tool-server URL that is no MCP server -----------------------------------

export interface AuthRecorder {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** The distinct Authorization headers received (on `path` when given), in the order first seen. */
  readonly authorizations: (path?: string) => ReadonlyArray<string | undefined>
  /** Forgets every request received so far. */
  readonly clear: () => void
}

/** Records the Authorization header of every request and answers 500 (so a tool-server test fails after sending it). */
export const authRecorder: Effect.Effect<AuthRecorder, never, Scope.Scope> = Effect.gen(function*() {
  const seen: Array<{ readonly path: string; readonly authorization: string | undefined }> = []
  const port = yield* listen((req, res) => {
    seen.push({ path: req.url ?? "", authorization: req.headers.authorization })
    req.resume()
    res.writeHead(500, { "content-type": "text/plain" })
    res.end("recorder")
  })
  return {
    url: `http://127.0.0.1:${port}`,
    authorizations: (path) => [
      ...new Set(seen.filter((r) => path === undefined || r.path === path).map((r) => r.authorization))
    ],
    clear: () => {
      seen.length = 0
    }
  }
})

// ---- a server that never answers ----------------------------------------------

export interface Holding {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Completes once the first request has arrived (and is being held open). */
  readonly arrived: Effect.Effect<void>
}

/** Accepts every request and never answers it (open connections are dropped with the scope). */
export const holding: Effect.Effect<Holding, never, Scope.Scope> = Effect.gen(function*() {
  let count = 0
  const waiters: Array<() => void> = []
  const port = yield* listen((req) => {
    req.resume()
    count += 1
    for (const wake of waiters.splice(0)) wake()
  })
  return {
    origin: `http://127.0.0.1:${port}`,
    arrived: Effect.callback<void>((resume) => {
      if (count > 0) resume(Effect.void)
      else waiters.push(() => resume(Effect.void))
    })
  }
})

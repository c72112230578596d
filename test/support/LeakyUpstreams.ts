/**
 * Upstreams that give credentials back, for the secret-leak scan: an MCP
 * server (SDK) demanding one bearer token whose tools echo the Authorization
 * header they were sent (as a result, as an error result, as a thrown error)
 * and whose 401 echoes the wrong one, plus a `wait` tool held until the test
 * releases it; and an HTTP API echoing every request (method, URL, headers)
 * in a 200, a 401, a 500, or never answering, with an OpenAPI document for
 * each place a credential can go (bearer, basic, apiKey header, query, cookie).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Deferred, Effect, type Scope } from "effect"
import type { IncomingMessage } from "node:http"
import { listen } from "./HttpPeer.ts"
import { sdkEndpoint } from "./McpServers.ts"

export interface EchoMcp {
  readonly url: string
  /** Completes once a `wait` call has arrived. */
  readonly waiting: Effect.Effect<void>
  /** Lets every pending and future `wait` call return. */
  readonly release: Effect.Effect<void>
}

/** The MCP server; `token` is the bearer it accepts. */
export const echoMcp = (token: string): Effect.Effect<EchoMcp, never, Scope.Scope> =>
  Effect.gen(function*() {
    const arrived = yield* Deferred.make<void>()
    let released: (() => void) | undefined
    const opened = new Promise<void>((resolve) => (released = resolve))
    yield* Effect.addFinalizer(() => Effect.sync(() => released?.()))
    // Stateless and answered one request at a time: the header of the request being served.
    let authorization = ""
    const port = yield* sdkEndpoint(
      () => {
        const server = new McpServer({ name: "echo-credentials", version: "1.0.0" })
        server.registerTool("whoami", { description: "Says which credential it was sent." }, () => ({
          content: [{ type: "text", text: `you sent authorization: ${authorization}` }]
        }))
        server.registerTool("refuse", { description: "Fails, quoting the credential." }, () => ({
          content: [{ type: "text", text: `credential ${authorization} is not allowed here` }],
          isError: true
        }))
        server.registerTool("crash", { description: "Throws, quoting the credential." }, () => {
          throw new Error(`crashed while checking ${authorization}`)
        })
        server.registerTool("wait", { description: "Waits for the test." }, async () => {
          Effect.runFork(Deferred.succeed(arrived, undefined))
          await opened
          return { content: [{ type: "text", text: `released (${authorization})` }] }
        })
        return server
      },
      (req, res) => {
        authorization = req.headers.authorization ?? ""
        if (authorization === `Bearer ${token}`) return false
        res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" })
        res.end(JSON.stringify({ error: "unauthorized", message: `rejected credential: ${authorization}` }))
        return true
      }
    )
    return {
      url: `http://127.0.0.1:${port}/mcp`,
      waiting: Deferred.await(arrived),
      release: Effect.sync(() => released?.())
    }
  })

/** Where an HTTP connection's credential goes, as its OpenAPI document says. */
export const placements = {
  bearer: { type: "http", scheme: "bearer" },
  basic: { type: "http", scheme: "basic" },
  header: { type: "apiKey", in: "header", name: "X-Api-Key" },
  query: { type: "apiKey", in: "query", name: "api_key" },
  cookie: { type: "apiKey", in: "cookie", name: "session" }
} as const
export type Placement = keyof typeof placements

/** The operations of every document: what the echo API does at each path. */
export const operations = ["echo", "deny", "boom", "hang"] as const

/** The OpenAPI 3 document of the echo API with its credential in `placement`. */
export const specFor = (placement: Placement): string =>
  JSON.stringify({
    openapi: "3.0.3",
    info: { title: `echo-${placement}`, version: "1" },
    components: { securitySchemes: { credential: placements[placement] } },
    security: [{ credential: [] }],
    paths: Object.fromEntries(
      operations.map((op) => [`/${op}`, { get: { operationId: op, responses: { "200": { description: "OK" } } } }])
    )
  })

export interface EchoApi {
  /** `http://127.0.0.1:<port>`: each placement's base URL is `<origin>/<placement>`. */
  readonly origin: string
  /** Completes once `count` requests to a `hang` path have arrived in total. */
  readonly hanging: (count: number) => Effect.Effect<void>
}

const seen = (req: IncomingMessage) => ({ method: req.method, url: req.url, headers: req.headers })

export const echoApi: Effect.Effect<EchoApi, never, Scope.Scope> = Effect.gen(function*() {
  let hung = 0
  const waiters: Array<{ readonly count: number; readonly wake: () => void }> = []
  const port = yield* listen((req, res) => {
    req.resume()
    const op = /^\/\w+\/(\w+)/.exec(req.url ?? "")?.[1]
    if (op === "echo") return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(seen(req)))
    if (op === "deny") {
      return res.writeHead(401, { "content-type": "application/json" }).end(
        JSON.stringify({ error: "bad credentials", request: seen(req) })
      )
    }
    if (op === "boom") {
      return res.writeHead(500, { "content-type": "text/plain" }).end(
        `upstream crashed on ${JSON.stringify(seen(req))}`
      )
    }
    if (op === "hang") {
      hung++
      for (const w of waiters.filter((w) => hung >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.wake()
      }
      return
    }
    res.writeHead(404).end()
  })
  return {
    origin: `http://127.0.0.1:${port}`,
    hanging: (count) =>
      Effect.callback<void>((resume) => {
        if (hung >= count) resume(Effect.void)
        else waiters.push({ count, wake: () => resume(Effect.void) })
      })
  }
})

/**
 * A real node:http API on 127.0.0.1 for HTTP-connection runs: it serves its
 * own OpenAPI document at `/openapi.json` (swappable, to test spec loading),
 * records every other request (method, path with query, headers, body) and
 * answers each with the status and JSON body `respond` chooses (possibly
 * later, to hold requests open), counting how many were open at once. Closed
 * with its scope.
 */
import { Effect, type Scope } from "effect"
import type { IncomingHttpHeaders } from "node:http"
import { listen } from "./HttpPeer.ts"

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface ApiServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Requests other than the document, in order. */
  readonly received: () => ReadonlyArray<Received>
  /** The most requests open at the same time. */
  readonly maxInFlight: () => number
  /** How many times the document was fetched. */
  readonly specLoads: () => number
  /** Replaces the document (`undefined`: the document path answers 404). */
  readonly setSpec: (spec: string | undefined) => void
}

export interface Reply {
  readonly status: number
  readonly body: unknown
  readonly headers?: Readonly<Record<string, string>>
}

export const serve = (
  spec: string,
  respond: (request: Received, inFlight: number) => Reply | Promise<Reply>
): Effect.Effect<ApiServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const received: Array<Received> = []
    let document: string | undefined = spec
    let specLoads = 0
    let inFlight = 0
    let maxInFlight = 0
    const port = yield* listen((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const path = req.url ?? "/"
        if (path === "/openapi.json") {
          specLoads++
          res.writeHead(document === undefined ? 404 : 200, { "content-type": "application/json" })
          res.end(document ?? "{}")
          return
        }
        const request = {
          method: req.method ?? "GET",
          path,
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8")
        }
        received.push(request)
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        void Promise.resolve(respond(request, inFlight)).then(({ status, body, headers }) => {
          inFlight--
          res.writeHead(status, { "content-type": "application/json", ...headers })
          res.end(JSON.stringify(body))
        })
      })
    })
    return {
      origin: `http://127.0.0.1:${port}`,
      received: () => [...received],
      specLoads: () => specLoads,
      maxInFlight: () => maxInFlight,
      setSpec: (next) => {
        document = next
      }
    }
  })

/**
 * A node:http server serving fixed documents (OpenAPI specs and friends) on
 * 127.0.0.1, for HTTP-connection tests; closed with its scope. Unknown paths
 * answer 404.
 */
import { Effect, type Scope } from "effect"
import { listen } from "./HttpPeer.ts"

export interface Document {
  readonly status?: number
  readonly contentType?: string
  readonly body: string
}

export interface SpecServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Paths requested so far, in order. */
  readonly requested: () => ReadonlyArray<string>
}

export const serve = (documents: Readonly<Record<string, Document>>): Effect.Effect<SpecServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const requested: Array<string> = []
    const port = yield* listen((req, res) => {
      const path = req.url ?? "/"
      requested.push(path)
      const doc = documents[path]
      if (doc === undefined) {
        res.writeHead(404, { "content-type": "text/plain" })
        res.end("not found")
        return
      }
      res.writeHead(doc.status ?? 200, { "content-type": doc.contentType ?? "application/json" })
      res.end(doc.body)
    })
    return { origin: `http://127.0.0.1:${port}`, requested: () => [...requested] }
  })

/**
 * The real HTTP servers tests stand up as the service's peers (MCP servers,
 * hook receivers, OpenAPI hosts, git and S3-like hosts, OTLP collectors, a
 * fake GitHub): listening on an ephemeral 127.0.0.1 port for as long as the
 * scope, and the whole body of a request they receive.
 */
import { Effect, type Scope } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"

/**
 * Listens on an ephemeral 127.0.0.1 port; closes (dropping open connections) with the scope.
 * `tls`: an HTTPS server with that key and certificate.
 */
export const listen = (
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  tls?: { readonly key: string; readonly cert: string }
): Effect.Effect<number, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.callback<Server>((resume) => {
        const server = tls === undefined ? createServer(handler) : createHttpsServer(tls, handler)
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    ),
    (server) => {
      const address = server.address()
      return typeof address === "object" && address !== null ? address.port : 0
    }
  )

/** The whole body of a request, as received. */
export const bodyBytes = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

/** The whole body of a request, as UTF-8 text. */
export const bodyText = (req: IncomingMessage): Promise<string> =>
  bodyBytes(req).then((bytes) => bytes.toString("utf8"))

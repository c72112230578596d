/**
 * The node:http server the API listens with, and how it stops.
 *
 * - Every request is answered. One that arrives while no route handler is
 *   attached (between the socket opening and the routes being attached, or
 *   after they were detached at shutdown) gets 503 `service_unavailable` with
 *   `Retry-After`, never silence. (The socket itself opens only once the
 *   services are built: src/App.ts.)
 * - Stopping (`layerStop`'s finalizer, which runs before the routes are
 *   detached): the socket stops accepting, open event streams are told to end
 *   (Draining), running requests get `graceMs` to finish and their keep-alive
 *   connections are closed as they go idle; connections still open after
 *   `graceMs` are closed.
 */
import { Duration, Effect, Layer } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { IdGenerator } from "../src/IdGenerator.ts"
import { Draining } from "./Draining.ts"

/** Seconds a client is told to wait before retrying a request the service could not take yet. */
export const RetryAfterSeconds = 1

const notReady = (res: ServerResponse, requestId: string) => {
  const body = JSON.stringify({
    error: {
      type: "api_error",
      code: "service_unavailable",
      message: `The service is starting or stopping; retry in ${RetryAfterSeconds} s.`,
      request_id: requestId
    }
  })
  res.shouldKeepAlive = false
  res.writeHead(503, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "retry-after": String(RetryAfterSeconds),
    "x-request-id": requestId
  })
  res.end(body)
}

/** A server whose own listener answers 503 when it is the only one (no routes attached). */
export const make = Effect.map(IdGenerator, (ids) => {
  const server = createServer()
  const stopping = { value: false }
  const listener = (event: "request" | "checkContinue") => (req: IncomingMessage, res: ServerResponse) => {
    if (stopping.value) {
      res.shouldKeepAlive = false
    } else {
      // A connection that goes idle while the server stops is closed at once, not at its keep-alive timeout.
      res.once("close", () => {
        if (stopping.value) server.closeIdleConnections()
      })
    }
    if (server.listenerCount(event) > 1) return
    if (event === "checkContinue") res.writeContinue()
    req.resume()
    notReady(res, Effect.runSync(ids.make("request")))
  }
  server.on("request", listener("request"))
  server.on("checkContinue", listener("checkContinue"))
  return { server, stopping }
})

export type Listener = Effect.Success<typeof make>

/**
 * Stops the listeners gracefully when the layer is released (see the module
 * header), all at once: the grace period is one for all of them.
 */
export const layerStop = (listeners: ReadonlyArray<Listener>, graceMs: number) =>
  Layer.effectDiscard(
    Effect.flatMap(Draining, (draining) =>
      Effect.addFinalizer(() =>
        Effect.gen(function*() {
          const open = listeners.filter((l) => l.server.listening)
          const closed = open.map(({ server, stopping }) => {
            stopping.value = true
            return new Promise<void>((resolve) => server.close(() => resolve()))
          })
          yield* draining.begin
          if (open.length === 0) return
          yield* Effect.promise(() => Promise.all(closed)).pipe(
            Effect.timeoutOrElse({
              duration: Duration.millis(graceMs),
              orElse: () =>
                Effect.andThen(
                  Effect.logWarning(`connections still open ${graceMs} ms after SIGTERM are closed`),
                  Effect.sync(() => open.forEach(({ server }) => server.closeAllConnections()))
                )
            })
          )
        })
      ))
  )

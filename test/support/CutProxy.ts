/**
 * A real HTTP proxy in front of the service that a test can use to break
 * connections: it forwards every request unchanged, records what each asked
 * for (method, path, `Last-Event-ID`), and `cut` destroys the sockets of the
 * responses still in flight, as a network failure would, mid-stream.
 */
import { Effect, type Scope } from "effect"
import { type IncomingMessage, request, type ServerResponse } from "node:http"
import { listen } from "./HttpPeer.ts"

export interface Forwarded {
  readonly method: string
  readonly path: string
  readonly lastEventId: string | undefined
}

export interface CutProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly requests: () => ReadonlyArray<Forwarded>
  /** Destroys every response in flight (the client sees its connection reset). */
  readonly cut: Effect.Effect<void>
  /** Completes once `count` requests have arrived. */
  readonly received: (count: number) => Effect.Effect<void>
}

export const cutProxy = (target: string): Effect.Effect<CutProxy, never, Scope.Scope> =>
  Effect.gen(function*() {
    const upstream = new URL(target)
    const seen: Array<Forwarded> = []
    const waiting = new Set<{ readonly count: number; readonly wake: () => void }>()
    const inFlight = new Set<ServerResponse>()
    const forward = (req: IncomingMessage, res: ServerResponse) => {
      inFlight.add(res)
      res.once("close", () => inFlight.delete(res))
      const lastEventId = req.headers["last-event-id"]
      seen.push({
        method: req.method ?? "GET",
        path: req.url ?? "/",
        lastEventId: typeof lastEventId === "string" ? lastEventId : undefined
      })
      const outgoing = request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        }
      )
      outgoing.on("error", () => res.destroy())
      res.once("close", () => outgoing.destroy())
      req.pipe(outgoing)
      // Last: a waiter woken here may cut at once, and this response must be among those cut.
      for (const waiter of waiting) if (seen.length >= waiter.count) waiter.wake()
    }
    const port = yield* listen(forward)
    return {
      url: `http://127.0.0.1:${port}`,
      requests: () => [...seen],
      cut: Effect.sync(() => {
        for (const res of inFlight) res.socket?.destroy()
      }),
      received: (count) =>
        Effect.callback<void>((resume) => {
          if (seen.length >= count) return resume(Effect.void)
          const waiter = {
            count,
            wake: () => {
              waiting.delete(waiter)
              resume(Effect.void)
            }
          }
          waiting.add(waiter)
          return Effect.sync(() => waiting.delete(waiter))
        })
    }
  })

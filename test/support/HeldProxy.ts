/**
 * A TCP proxy to a local port that holds every connection it accepts until
 * the test releases it: a database that does not answer yet, so a service
 * process stays in its start-up for as long as a test needs. Frozen, it
 * stops passing bytes either way and holds new connections again, closing
 * none: a database that stopped answering (no reset, no error, no reply).
 */
import { Deferred, Effect, type Scope } from "effect"
import { connect, createServer, type Socket } from "node:net"

export interface HeldProxy {
  readonly port: number
  /** Completes when the first connection has arrived (the process is now waiting on it). */
  readonly connected: Effect.Effect<void>
  /** Forwards every held and future connection to the target. */
  readonly release: Effect.Effect<void>
  /** Stops forwarding: open connections pass nothing more either way, new ones are held; none is closed. */
  readonly freeze: Effect.Effect<void>
}

export const heldProxy = (targetPort: number): Effect.Effect<HeldProxy, never, Scope.Scope> =>
  Effect.gen(function*() {
    const arrived = yield* Deferred.make<void>()
    const held: Array<Socket> = []
    const open: Array<Socket> = []
    let released = false
    const piped: Array<readonly [Socket, Socket]> = []
    const forward = (client: Socket) => {
      const upstream = connect(targetPort, "127.0.0.1")
      open.push(upstream)
      piped.push([client, upstream])
      client.on("error", () => upstream.destroy())
      upstream.on("error", () => client.destroy())
      client.pipe(upstream)
      upstream.pipe(client)
      client.resume()
    }
    const server = createServer({ pauseOnConnect: true }, (client) => {
      open.push(client)
      if (released) return forward(client)
      held.push(client)
      Deferred.doneUnsafe(arrived, Effect.void)
    })
    const port = yield* Effect.acquireRelease(
      Effect.callback<number>((resume) => {
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
        })
      }),
      () =>
        Effect.callback<void>((resume) => {
          for (const socket of open) socket.destroy()
          server.close(() => resume(Effect.void))
        })
    )
    return {
      port,
      connected: Deferred.await(arrived),
      release: Effect.sync(() => {
        released = true
        for (const client of held.splice(0)) forward(client)
      }),
      freeze: Effect.sync(() => {
        released = false
        for (const [client, upstream] of piped.splice(0)) {
          client.unpipe(upstream)
          upstream.unpipe(client)
          client.pause()
          upstream.pause()
        }
      })
    }
  })

/**
 * Requests of the chaos load: each goes to a node that is up, and one that
 * fails on the way (the node died under it, or answered 5xx while it was
 * dying) is sent again to another node. Every request sent this way is safe
 * to repeat: runs start with an Idempotency-Key, resolving and cancelling are
 * idempotent.
 */
import { Effect } from "effect"
import { apiKey } from "./Cluster.ts"

export interface Reply {
  readonly status: number
  readonly text: string
}

export interface Api {
  /**
   * Sends to a node that is up (`only`: always that node), again (to another one) on a transport
   * failure or a 5xx, for at most 10 s.
   */
  readonly send: (
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
    only?: string
  ) => Effect.Effect<Reply, Error>
}

const attempt = (base: string, method: string, path: string, body: unknown, headers: Record<string, string>) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(base + path, {
        method,
        signal,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers
        },
        body: body === undefined ? null : JSON.stringify(body)
      })
      return { status: response.status, text: await response.text() }
    },
    catch: (e) => (e instanceof Error ? e : new Error(String(e)))
  }).pipe(Effect.timeout("30 seconds"))

export const makeApi = (live: () => ReadonlyArray<string>): Api => ({
  send: (method, path, body, headers = {}, only) =>
    Effect.gen(function*() {
      let last: Error = new Error("no node is up")
      for (let i = 0; i < 40; i++) {
        const nodes = only === undefined ? live() : [only]
        const base = nodes[Math.floor(Math.random() * nodes.length)]
        if (base !== undefined) {
          const reply = yield* Effect.result(attempt(base, method, path, body, headers))
          if (reply._tag === "Success" && reply.success.status < 500) return reply.success
          last = reply._tag === "Failure"
            ? new Error(`${method} ${path}: ${String(reply.failure)}`)
            : new Error(`${method} ${path}: ${reply.success.status} ${reply.success.text}`)
        }
        yield* Effect.sleep("250 millis")
      }
      return yield* Effect.fail(last)
    })
})

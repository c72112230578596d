/**
 * The listener (http/Listener.ts) on a real socket: a request that arrives
 * while no route handler is attached is answered 503 `service_unavailable`
 * with Retry-After; stopping stops accepting, tells open streams to end, lets
 * a running request finish and closes its connection, and closes connections
 * still open after the grace period.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { Agent, request } from "node:http"
import type { ServerResponse } from "node:http"
import { Draining } from "../../http/Draining.ts"
import * as Listener from "../../http/Listener.ts"
import { IdGenerator } from "../../src/IdGenerator.ts"
import { parseJson } from "../support/TestServer.ts"

type Reply =
  | {
    readonly _tag: "reply"
    readonly status: number
    readonly headers: Record<string, string | string[] | undefined>
    readonly body: string
  }
  | { readonly _tag: "error"; readonly code: string | undefined }

const get = (port: number, path = "/healthz", agent: Agent | false = false) =>
  Effect.callback<Reply>((resume) => {
    const req = request({ host: "127.0.0.1", port, path, agent }, (res) => {
      let body = ""
      res.on("data", (d: Buffer) => (body += d.toString()))
      res.on("end", () =>
        resume(Effect.succeed({ _tag: "reply", status: res.statusCode ?? 0, headers: res.headers, body })))
      res.on("error", (error: NodeJS.ErrnoException) =>
        resume(Effect.succeed({ _tag: "error", code: error.code })))
    })
    req.on("error", (error: NodeJS.ErrnoException) => resume(Effect.succeed({ _tag: "error", code: error.code })))
    req.end()
    return Effect.sync(() => req.destroy())
  })

/** A listener on a free port with its stop layer built in `scope`; the draining signal it completes. */
const listening = (scope: Scope.Scope, graceMs: number) =>
  Effect.gen(function*() {
    const listener = yield* Listener.make
    const context = yield* Layer.buildWithScope(
      Listener.layerStop([listener], graceMs).pipe(Layer.provideMerge(Draining.layer)),
      scope
    )
    const port = yield* Effect.callback<number>((resume) => {
      listener.server.listen(0, "127.0.0.1", () => {
        const address = listener.server.address()
        resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
      })
    })
    return { listener, port, draining: Context.get(context, Draining) }
  }).pipe(Effect.provide(IdGenerator.layer))

describe("listener", () => {
  it.live("a request while no route is attached: 503 service_unavailable, Retry-After, the envelope with the X-Request-Id", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { port } = yield* listening(scope, 10_000)
      const reply = yield* get(port)
      assert.strictEqual(reply._tag, "reply")
      if (reply._tag !== "reply") return
      assert.strictEqual(reply.status, 503)
      assert.strictEqual(reply.headers["retry-after"], "1")
      assert.strictEqual(reply.headers["content-type"], "application/json")
      const requestId = reply.headers["x-request-id"]
      assert.match(String(requestId), /^req_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(parseJson(reply.body), {
        error: {
          type: "api_error",
          code: "service_unavailable",
          message: "The service is starting or stopping; retry in 1 s.",
          request_id: requestId
        }
      })
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("stopping: no new connection, open streams told to end, a running request finishes and its connection closes", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { listener, port, draining } = yield* listening(scope, 60_000)
      const arrived = yield* Deferred.make<ServerResponse>()
      listener.server.on("request", (_req, res: ServerResponse) => Deferred.doneUnsafe(arrived, Effect.succeed(res)))
      // A keep-alive client, and no keep-alive timeout: the connection would stay open as long as the client keeps it.
      listener.server.keepAliveTimeout = 0
      const agent = new Agent({ keepAlive: true })
      yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
      const running = yield* Effect.forkChild(get(port, "/slow", agent))
      const res = yield* Deferred.await(arrived)

      const stopping = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* draining.started
      assert.deepStrictEqual(yield* get(port), { _tag: "error", code: "ECONNREFUSED" })
      res.writeHead(200, { "content-type": "text/plain" })
      res.end("finished")
      const reply = yield* Fiber.join(running)
      assert.strictEqual(reply._tag, "reply")
      if (reply._tag === "reply") assert.strictEqual(reply.body, "finished")
      // Done once the finished request's connection closed: not at its keep-alive timeout, well inside the grace period.
      yield* Fiber.join(stopping)
      assert.isFalse(listener.server.listening)
    }).pipe(Effect.scoped))

  it.live("stopping: a connection still busy after the grace period is closed", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { listener, port } = yield* listening(scope, 0)
      const arrived = yield* Deferred.make<void>()
      listener.server.on("request", () => Deferred.doneUnsafe(arrived, Effect.void))
      const running = yield* Effect.forkChild(get(port, "/never"))
      yield* Deferred.await(arrived)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(yield* Fiber.join(running), { _tag: "error", code: "ECONNRESET" })
    }))
})

/**
 * A receiver for the service's outbound deliveries (hook requests, hook
 * tests, result handler dispatch): a real node:http server on 127.0.0.1 that
 * records every request with its raw body and answers as the test says,
 * including holding a request open (to drive the service's timeout), and
 * verifies a delivery's signature with Stripe's verifier, as a customer would.
 */
import { assert } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { IncomingHttpHeaders, ServerResponse } from "node:http"
import Stripe from "stripe"
import { bodyText, listen } from "./HttpPeer.ts"

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The body exactly as received (what the signature covers). */
  readonly body: string
}

/** How the server answers: a status and a raw body, or hold the request open until `releaseHeld`. */
export type Answer =
  | { readonly _tag: "Reply"; readonly status: number; readonly body: string; readonly contentType: string }
  | { readonly _tag: "Hold" }

export const reply = (status: number, body: unknown): Answer => ({
  _tag: "Reply",
  status,
  body: JSON.stringify(body),
  contentType: "application/json"
})

export const replyText = (status: number, body: string, contentType = "text/plain"): Answer => ({
  _tag: "Reply",
  status,
  body,
  contentType
})

export const hold: Answer = { _tag: "Hold" }

/** A header the delivery must carry, as a string. */
export const header = (received: Received, name: string): string => {
  const value = received.headers[name]
  if (typeof value !== "string") return assert.fail(`header ${name} missing: ${JSON.stringify(received.headers)}`)
  return value
}

const stripe = new Stripe("sk_test_x")

/** Verifies the delivery with Stripe's verifier, as a receiver would; returns the parsed body. */
export const verify = (received: Received, secret: string, receivedAtMs: number) =>
  stripe.webhooks.constructEvent(received.body, header(received, "svc-signature"), secret, 300, undefined, receivedAtMs)

export class HookServer extends Context.Service<HookServer, {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Every request received so far, in arrival order. */
  readonly received: Effect.Effect<ReadonlyArray<Received>>
  /** The answer to every request from now on. */
  readonly answerWith: (answer: Answer) => Effect.Effect<void>
  /** Completes once at least `count` requests have arrived in total; returns the `count`-th. */
  readonly awaitRequest: (count: number) => Effect.Effect<Received>
  /** Answers every held request (200 allow) and stops holding. */
  readonly releaseHeld: Effect.Effect<void>
}>()("test/HookServer") {
  static readonly layer = Layer.effect(HookServer)(
    Effect.gen(function*() {
      const received: Array<Received> = []
      const held: Array<ServerResponse> = []
      const waiters: Array<{ readonly count: number; readonly resolve: (r: Received) => void }> = []
      let answer: Answer = reply(200, { decision: "allow" })

      const notify = () => {
        for (let i = waiters.length - 1; i >= 0; i--) {
          const waiter = waiters[i]
          if (received.length >= waiter.count) {
            waiters.splice(i, 1)
            waiter.resolve(received[waiter.count - 1])
          }
        }
      }

      const release = () => {
        for (const res of held.splice(0)) {
          if (!res.writableEnded) {
            res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ decision: "allow" }))
          }
        }
      }

      const port = yield* listen((req, res) => {
        void bodyText(req).then((body) => {
          const current = answer
          received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body })
          if (current._tag === "Hold") held.push(res)
          else res.writeHead(current.status, { "content-type": current.contentType }).end(current.body)
          notify()
        })
      })
      // Registered after the server's own finalizer, so it runs first: held requests are answered before it closes.
      yield* Effect.addFinalizer(() => Effect.sync(release))

      return HookServer.of({
        origin: `http://127.0.0.1:${port}`,
        received: Effect.sync(() => [...received]),
        answerWith: (next) =>
          Effect.sync(() => {
            answer = next
          }),
        awaitRequest: (count) =>
          Effect.callback<Received>((resume) => {
            if (received.length >= count) return resume(Effect.succeed(received[count - 1]))
            const waiter = { count, resolve: (r: Received) => resume(Effect.succeed(r)) }
            waiters.push(waiter)
            return Effect.sync(() => {
              const index = waiters.indexOf(waiter)
              if (index !== -1) waiters.splice(index, 1)
            })
          }),
        releaseHeld: Effect.sync(() => {
          answer = reply(200, { decision: "allow" })
          release()
        })
      })
    })
  )
}

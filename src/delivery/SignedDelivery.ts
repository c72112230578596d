/**
 * One signed JSON POST to a user-registered URL through the guarded client:
 * sent once, no retry, bounded by a timeout measured on `Clock` (so TestClock
 * drives it in tests). Headers: Content-Type, Svc-Signature, Svc-Timestamp
 * (unix seconds, the same `t` as in the signature), Svc-Request-Id, plus the
 * caller's.
 */
import { Clock, Context, Data, Duration, Effect, Layer, type Redacted } from "effect"
import { errorText } from "../ErrorText.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { Outbound, UrlRefused } from "../outbound/Outbound.ts"
import { signatureHeader } from "./Signature.ts"

export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{
  readonly reason: "timeout" | "unreachable" | "refused" | "status"
  readonly message: string
  readonly status?: number
  /** What failed underneath, kept for the logs. */
  readonly cause?: unknown
}> {}

export interface Delivery {
  readonly url: string
  readonly secret: Redacted.Redacted
  readonly body: unknown
  readonly timeoutMs: number
  readonly headers?: Readonly<Record<string, string>>
  /** Stable per logical delivery where the receiver deduplicates on it. */
  readonly requestId?: string
  /** Reading the answer stops past this many bytes (`tooLarge`); unbounded when absent. */
  readonly maxResponseBytes?: number
}

export interface Delivered {
  readonly status: number
  /** The answer's body; empty when `tooLarge`. */
  readonly text: string
  /** The body was over `maxResponseBytes`: reading stopped there. */
  readonly tooLarge: boolean
  readonly latencyMs: number
  readonly requestId: string
}

/** The body as text, or undefined once it passes `max` bytes (the rest is not read). */
const readBody = async (response: Response, max: number | undefined): Promise<string | undefined> => {
  if (max === undefined || response.body === null) return response.text()
  const reader = response.body.getReader()
  const parts: Array<Uint8Array> = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return Buffer.concat(parts).toString("utf8")
    total += value.byteLength
    if (total > max) {
      await reader.cancel()
      return undefined
    }
    parts.push(value)
  }
}

export class SignedDelivery extends Context.Service<SignedDelivery, {
  readonly post: (delivery: Delivery) => Effect.Effect<Delivered, DeliveryFailed>
}>()("svc/SignedDelivery") {
  static readonly layer = Layer.effect(SignedDelivery)(
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const ids = yield* IdGenerator
      return {
        post: Effect.fn("SignedDelivery.post")(function*(delivery: Delivery) {
          const body = JSON.stringify(delivery.body)
          const started = yield* Clock.currentTimeMillis
          const timestamp = Math.floor(started / 1000)
          const requestId = delivery.requestId ?? (yield* ids.make("request"))
          const headers = {
            ...delivery.headers,
            "content-type": "application/json",
            "svc-signature": signatureHeader(delivery.secret, timestamp, body),
            "svc-timestamp": String(timestamp),
            "svc-request-id": requestId
          }
          const response = yield* Effect.tryPromise({
            try: async (signal) => {
              const r = await outbound.fetch(delivery.url, { method: "POST", headers, body, signal })
              const text = await readBody(r, delivery.maxResponseBytes)
              return { status: r.status, text: text ?? "", tooLarge: text === undefined }
            },
            catch: (cause) =>
              cause instanceof UrlRefused
                ? new DeliveryFailed({ reason: "refused", message: `the URL was refused: ${cause.message}`, cause })
                : new DeliveryFailed({
                  reason: "unreachable",
                  message: `could not reach ${delivery.url}: ${errorText(cause)}`,
                  cause
                })
          }).pipe(
            Effect.timeoutOrElse({
              duration: Duration.millis(delivery.timeoutMs),
              orElse: () =>
                Effect.fail(
                  new DeliveryFailed({ reason: "timeout", message: `no response within ${delivery.timeoutMs} ms` })
                )
            })
          )
          const latencyMs = (yield* Clock.currentTimeMillis) - started
          if (response.status < 200 || response.status >= 300) {
            return yield* new DeliveryFailed({
              reason: "status",
              status: response.status,
              message: `${delivery.url} answered HTTP ${response.status}`
            })
          }
          return { ...response, latencyMs, requestId }
        })
      }
    })
  )
}

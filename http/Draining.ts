/**
 * The service has begun to stop (SIGTERM / SIGINT): open event streams end
 * (without `[DONE]`, as a cut stream does) so their clients resume them with
 * Last-Event-ID on another node, and the listener can close. Completed by the
 * listener's finalizer (http/Listener.ts), once it has stopped accepting.
 */
import { Context, Deferred, Effect, Layer } from "effect"

export class Draining extends Context.Service<Draining, {
  /** Completes when stopping begins. */
  readonly started: Effect.Effect<void>
  readonly begin: Effect.Effect<void>
}>()("svc/Draining") {
  static readonly layer = Layer.effect(Draining)(
    Effect.map(Deferred.make<void>(), (signal) => ({
      started: Deferred.await(signal),
      begin: Effect.asVoid(Deferred.succeed(signal, undefined))
    }))
  )
}

/**
 * The environments' announcements (EnvironmentRepo), fanned out in memory: a
 * runner's poll waits for `call:<envId>`, a run for `done:<callId>`. On
 * PostgreSQL they travel as NOTIFY on one channel, one LISTEN per process; on
 * the embedded database (one process, one connection, which a LISTEN would
 * hold for good) they are published in memory directly. `waitFor` subscribes
 * before it checks, so nothing announced between the check and the wait is
 * missed; its timeout is on the Clock.
 */
import { PgClient } from "@effect/sql-pg"
import { Cause, Context, Duration, Effect, Layer, Option, PubSub, Queue } from "effect"
import { ServiceConfig } from "../config/ServiceConfig.ts"

/** The NOTIFY channel of the environments' announcements. */
export const channel = "svc_environments"

export class EnvironmentSignals extends Context.Service<EnvironmentSignals, {
  /** Tells every waiter of every process (NOTIFY, or in memory on the embedded database). */
  readonly announce: (payload: string) => Effect.Effect<void>
  /**
   * Runs `check` until it answers Some: again on each announcement of one of `payloads`, at most
   * `timeout` in all (then None).
   */
  readonly waitFor: <A>(
    payloads: ReadonlyArray<string>,
    check: Effect.Effect<Option.Option<A>>,
    timeout: Duration.Input
  ) => Effect.Effect<Option.Option<A>>
}>()("svc/EnvironmentSignals") {
  static readonly layer = Layer.effect(EnvironmentSignals)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const config = yield* ServiceConfig
      const hub = yield* PubSub.unbounded<string>()
      const shared = Option.isSome(config.databaseUrl)
      if (shared) {
        const listened = yield* sql.listen(channel).pipe(Effect.orDie)
        yield* Effect.forkScoped(
          Effect.forever(Effect.flatMap(Queue.take(listened), (n) => PubSub.publish(hub, n.payload))).pipe(
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause)
                ? Effect.void
                : Effect.logError("environment notifications stopped: the LISTEN connection failed", cause)
            )
          )
        )
      }
      return {
        announce: (payload: string) =>
          shared ? sql.notify(channel, payload).pipe(Effect.orDie) : PubSub.publish(hub, payload).pipe(Effect.asVoid),
        waitFor: <A>(
          payloads: ReadonlyArray<string>,
          check: Effect.Effect<Option.Option<A>>,
          timeout: Duration.Input
        ) =>
          Effect.scoped(Effect.gen(function*() {
            const subscription = yield* PubSub.subscribe(hub)
            const loop: Effect.Effect<A> = Effect.flatMap(check, (found) =>
              Option.isSome(found)
                ? Effect.succeed(found.value)
                : Effect.flatMap(waitMatching(subscription, payloads), () => loop))
            return yield* Effect.timeoutOption(loop, timeout)
          }))
      }
    })
  )
}

/** Takes announcements until one of `payloads` comes. */
const waitMatching = (subscription: PubSub.Subscription<string>, payloads: ReadonlyArray<string>) =>
  Effect.flatMap(
    PubSub.take(subscription),
    (p): Effect.Effect<void> => payloads.includes(p) ? Effect.void : waitMatching(subscription, payloads)
  )

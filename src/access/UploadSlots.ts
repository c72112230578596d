/**
 * The uploads one API key may have in flight at once
 * (SVC_MAX_CONCURRENT_UPLOADS_PER_KEY, 2 by default, 0 unlimited), counted
 * across every process of the cluster (a slot row each in the database,
 * UploadSlotRepo; a process that dies frees its slots): each body is streamed
 * to the artifact store as it arrives, so what one key can hold of the
 * service (its connections, its store's statements) is bounded by how many it
 * sends at once. One more is 429 `rate_limited` with `Retry-After`, before
 * its body is read. A slot is held until the upload's answer, success or
 * failure; `inFlight` shows the slots this process holds per key (the uploads
 * tests watch it).
 */
import { Context, Effect, Layer, type Scope, type Stream, SubscriptionRef } from "effect"
import { RateLimited } from "../../domain/Errors.ts"
import type { Principal } from "../../domain/Principal.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { UploadSlotRepo } from "../store/UploadSlotRepo.ts"

/** What a refused upload is told to wait: about what a few MiB take to arrive. */
export const retryAfterSeconds = 1

export class UploadSlots extends Context.Service<UploadSlots, {
  /** Takes one of the caller's key's slots until the scope closes; 429 when they are all taken. */
  readonly acquire: (principal: Principal) => Effect.Effect<void, RateLimited, Scope.Scope>
  /** The slots held per key id, now and at every change. */
  readonly inFlight: Stream.Stream<ReadonlyMap<string, number>>
}>()("svc/UploadSlots") {
  static readonly layer = Layer.effect(UploadSlots)(
    Effect.gen(function*() {
      const limit = (yield* ServiceConfig).artifacts.maxConcurrentUploadsPerKey
      const repo = yield* UploadSlotRepo
      const held = yield* SubscriptionRef.make<ReadonlyMap<string, number>>(new Map())
      const change = (keyId: string, by: number) =>
        SubscriptionRef.update(held, (slots) => {
          const next = new Map(slots)
          const count = (slots.get(keyId) ?? 0) + by
          if (count === 0) next.delete(keyId)
          else next.set(keyId, count)
          return next
        })
      /** The slot's number in the cluster (-1: unlimited, none taken), or undefined when the key has none free. */
      const take = (keyId: string): Effect.Effect<number | undefined> =>
        limit === null ? Effect.succeed(-1) : repo.take(keyId, limit)
      const release = (keyId: string, slot: number) =>
        slot < 0 ? Effect.void : repo.release(keyId, slot).pipe(
          // The row stays until this process ends (then it is free): the upload's answer is not changed for it.
          Effect.catchCause((cause) => Effect.logWarning("upload slot not released", cause))
        )
      return {
        acquire: (principal: Principal) =>
          Effect.acquireRelease(
            take(principal.keyId).pipe(
              Effect.tap((slot) => slot === undefined ? Effect.void : change(principal.keyId, 1))
            ),
            (slot) =>
              slot === undefined ? Effect.void : release(principal.keyId, slot).pipe(
                Effect.andThen(change(principal.keyId, -1))
              )
          ).pipe(
            Effect.flatMap((slot) =>
              slot !== undefined ? Effect.void : Effect.fail(
                new RateLimited({
                  code: "rate_limited",
                  message: `This API key already has ${limit} uploads in progress, the most it may have at once ` +
                    `(SVC_MAX_CONCURRENT_UPLOADS_PER_KEY); retry after ${retryAfterSeconds} s.`,
                  retryAfterSeconds
                })
              )
            )
          ),
        inFlight: SubscriptionRef.changes(held)
      }
    })
  ).pipe(Layer.provide(UploadSlotRepo.layer))
}

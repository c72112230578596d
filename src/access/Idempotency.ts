/**
 * Idempotency-Key handling for every POST behind an API key (most through
 * http/Idempotent.ts; thread creates and run starts call `run` themselves). A replay
 * with the same body returns the first response; a different body is 409
 * idempotency_key_conflict; a replay while the first is still running is 503
 * service_unavailable. Successful responses are remembered, and the failures
 * that did something (a message held as a follow-up: 409 thread_busy with
 * `queued`), so a retry never holds the message twice; any other failed
 * request leaves nothing behind, so it can be retried with the same key.
 */
import { Clock, Context, Duration, Effect, Exit, Layer, Option, Schedule, Schema } from "effect"
import { Conflict, InvalidRequest, Unavailable } from "../../domain/Errors.ts"
import type { Principal } from "../../domain/Principal.ts"
import { canonicalJson, sha256Hex } from "../CanonicalJson.ts"
import { IdempotencyRepo, IdempotencyRetentionMs, type IdempotencyScope } from "../store/IdempotencyRepo.ts"
import { toIso } from "../Time.ts"

export interface IdempotentRequest {
  readonly principal: Principal
  readonly method: string
  readonly path: string
  readonly key: string | undefined
  readonly body: unknown
}

export interface Replayable<A> {
  readonly schema: Schema.Codec<A, unknown>
  readonly status: number
  /** How a replayed value differs from the first answer (threads: created = false). */
  readonly onReplay?: (a: A) => A
}

/** A 409 that records an effect (the message was held): answered again, the same, on a retry. */
const keptConflict = (e: unknown): Conflict | undefined =>
  e instanceof Conflict && e.details?.["queued"] === true ? e : undefined

const encodeConflict = Schema.encodeUnknownEffect(Conflict)
const decodeConflict = Schema.decodeUnknownEffect(Conflict)

export type IdempotencyError = Conflict | Unavailable | InvalidRequest

export class Idempotency extends Context.Service<Idempotency, {
  readonly run: <A, E, R>(
    request: IdempotentRequest,
    replay: Replayable<A>,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | IdempotencyError, R>
}>()("svc/Idempotency") {
  static readonly layer = Layer.effect(Idempotency)(
    Effect.gen(function*() {
      const repo = yield* IdempotencyRepo
      const run = <A, E, R>(request: IdempotentRequest, replay: Replayable<A>, effect: Effect.Effect<A, E, R>) =>
        Effect.gen(function*() {
          const key = request.key
          if (key === undefined) return yield* effect
          if (key.length === 0 || key.length > 255) {
            return yield* InvalidRequest.forField("Idempotency-Key", "Idempotency-Key must be 1 to 255 characters.")
          }
          const scope: IdempotencyScope = {
            organizationId: request.principal.organizationId,
            workspaceId: request.principal.workspaceId,
            method: request.method,
            path: request.path,
            key
          }
          const bodyHash = sha256Hex(canonicalJson(request.body))
          const now = yield* Clock.currentTimeMillis
          const claim = yield* repo.claim(scope, bodyHash, toIso(now), toIso(now - IdempotencyRetentionMs))
          if (claim._tag !== "Claimed" && claim.bodyHash !== bodyHash) {
            return yield* new Conflict({
              code: "idempotency_key_conflict",
              message: "This Idempotency-Key was already used with a different request body."
            })
          }
          if (claim._tag === "Pending") {
            return yield* new Unavailable({
              code: "service_unavailable",
              message: "A request with this Idempotency-Key is still being processed; retry shortly."
            })
          }
          if (claim._tag === "Completed" && claim.status === 409) {
            return yield* Effect.flatMap(Effect.orDie(decodeConflict(claim.response)), Effect.fail)
          }
          if (claim._tag === "Completed") {
            const value = yield* Schema.decodeUnknownEffect(replay.schema)(claim.response).pipe(Effect.orDie)
            return replay.onReplay ? replay.onReplay(value) : value
          }
          return yield* effect.pipe(
            Effect.tap((a) =>
              Schema.encodeEffect(replay.schema)(a).pipe(
                Effect.orDie,
                Effect.flatMap((encoded) => repo.complete(scope, replay.status, encoded))
              )
            ),
            Effect.onExit((exit) => {
              if (Exit.isSuccess(exit)) return Effect.void
              const kept = Exit.findErrorOption(exit).pipe(Option.flatMap((e) => Option.fromNullishOr(keptConflict(e))))
              return Option.isSome(kept)
                ? Effect.flatMap(
                  Effect.orDie(encodeConflict(kept.value)),
                  (encoded) => repo.complete(scope, 409, encoded)
                )
                : repo.release(scope)
            })
          )
        })
      return { run }
    })
  ).pipe(Layer.provide(IdempotencyRepo.layer))

  /** Deletes expired records hourly, for as long as the layer lives. */
  static readonly layerPurge = Layer.effectDiscard(
    Effect.gen(function*() {
      const repo = yield* IdempotencyRepo
      const purge = Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => repo.purgeExpired(toIso(now - IdempotencyRetentionMs))
      )
      yield* Effect.forkScoped(Effect.repeat(purge, Schedule.spaced(Duration.hours(1))))
    })
  ).pipe(Layer.provide(IdempotencyRepo.layer))
}

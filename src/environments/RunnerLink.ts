/**
 * The service's side of the runners' connection (routes in
 * http/EnvironmentsApi.ts). Why a long poll plus POSTs rather than a
 * WebSocket: each request stands alone, so it lands on any node behind any
 * load balancer or HTTP proxy and goes through the API's usual stack, and no
 * node holds state a runner depends on: the calls live in PostgreSQL
 * (EnvironmentRepo), so a node dying loses at most one poll, which the runner
 * sends again. A poll is the runner's heartbeat (a new runner's first one is
 * answered at once, so it knows it is connected); it waits up to
 * `pollWindowMs` for a call of the runner's own environment (the token names
 * it; nothing else can). A runner whose poll connection closes before its
 * answer is gone: its claimed calls are settled at once (reads queued again,
 * others answered as of unknown outcome) rather than after the stale window.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { Unauthenticated } from "../../domain/Errors.ts"
import { type Claimed, EnvironmentRepo } from "./EnvironmentRepo.ts"
import { Environments, type RunnerGrant } from "./Environments.ts"
import { EnvironmentSignals } from "./EnvironmentSignals.ts"

/** How long a poll waits for a call before answering `{ call: null }`. */
export const pollWindowMs = 20_000

export interface Hello {
  readonly runnerId: string
  readonly hostName: string
  readonly version: string
}

export interface RunnerResult {
  readonly runnerId: string
  readonly output: unknown
  readonly text: string
  readonly isError: boolean
}

const refused = new Unauthenticated({
  message: "The environment token is not valid (rotated, deleted or mistyped): send 'Authorization: Bearer envtok_...'."
})

/** The token of an `Authorization: Bearer <token>` header. */
const bearer = (header: string): Redacted.Redacted | undefined => {
  const match = /^bearer\s+(\S+)$/i.exec(header.trim())
  return match?.[1] === undefined ? undefined : Redacted.make(match[1])
}

export class RunnerLink extends Context.Service<RunnerLink, {
  /** `until`: the node begins to stop; the poll answers no call at once (the runner polls another node). */
  readonly poll: (
    authorization: string,
    hello: Hello,
    until: Effect.Effect<void>
  ) => Effect.Effect<Option.Option<Claimed>, Unauthenticated>
  readonly result: (
    authorization: string,
    callId: string,
    result: RunnerResult
  ) => Effect.Effect<boolean, Unauthenticated>
}>()("svc/RunnerLink") {
  static readonly layer = Layer.effect(RunnerLink)(
    Effect.gen(function*() {
      const environments = yield* Environments
      const repo = yield* EnvironmentRepo
      const signals = yield* EnvironmentSignals
      const grantOf = (authorization: string): Effect.Effect<RunnerGrant, Unauthenticated> => {
        const token = bearer(authorization)
        return token === undefined
          ? Effect.fail(refused)
          : Effect.flatMap(
            environments.authenticate(token),
            (grant) => Option.isSome(grant) ? Effect.succeed(grant.value) : Effect.fail(refused)
          )
      }
      /** The token still opens the environment (a rotation ends the polls of the old one). */
      const stillValid = (grant: RunnerGrant) => Effect.map(repo.environmentOfToken(grant.tokenHash), Option.isSome)
      return {
        poll: Effect.fn("RunnerLink.poll")(function*(authorization, hello, until) {
          const grant = yield* grantOf(authorization)
          const { environmentId } = grant
          const served = Effect.gen(function*() {
            const fresh = yield* repo.heartbeat({
              ...hello,
              id: hello.runnerId,
              environmentId,
              tokenHash: grant.tokenHash
            })
            yield* repo.dropStale(environmentId)
            // A runner's first poll is answered at once (with a call if one waits): it then knows it is connected.
            // (Unless the token was rotated meanwhile: then refused like any poll of the old token.)
            if (fresh) {
              return (yield* stillValid(grant))
                ? Option.map(yield* repo.claim(environmentId, hello.runnerId), Option.some)
                : Option.some(Option.none<Claimed>())
            }
            const check = Effect.flatMap(stillValid(grant), (valid) =>
              valid
                ? Effect.map(repo.claim(environmentId, hello.runnerId), Option.map(Option.some))
                : Effect.succeed(Option.some(Option.none<Claimed>())))
            return yield* Effect.raceFirst(
              signals.waitFor([`call:${environmentId}`, `token:${environmentId}`], check, pollWindowMs),
              Effect.as(until, Option.none())
            )
          }).pipe(
            // The runner's connection closed before its answer: the runner is gone (killed, or its network).
            Effect.onInterrupt(() => repo.dropRunner(hello.runnerId, environmentId))
          )
          const answer = yield* served
          if (Option.isSome(answer) && Option.isNone(answer.value)) {
            yield* repo.dropRunner(hello.runnerId, environmentId)
            return yield* refused
          }
          return Option.flatten(answer)
        }),
        result: Effect.fn("RunnerLink.result")(function*(authorization, callId, result) {
          const grant = yield* grantOf(authorization)
          return yield* repo.complete(callId, result.runnerId, grant.environmentId, {
            output: result.output,
            text: result.text,
            isError: result.isError
          })
        })
      }
    })
  )
}

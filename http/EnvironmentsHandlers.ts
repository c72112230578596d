/** Handlers of environments and of their runners' routes (http/EnvironmentsApi.ts). */
import { Effect, Option, Redacted, Schema } from "effect"
import { HttpMiddleware } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Environment, type EnvironmentWithToken } from "../domain/Environment.ts"
import { Environments } from "../src/environments/Environments.ts"
import { RunnerLink } from "../src/environments/RunnerLink.ts"
import { SecretBox } from "../src/secrets/SecretBox.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { Draining } from "./Draining.ts"
import { envelope } from "./ErrorEnvelope.ts"
import { idempotent } from "./Idempotent.ts"

/** What an Idempotency-Key record keeps of create and rotate-token: the environment, its token sealed. */
const SealedAnswer = Schema.Struct({
  ...Environment.fields,
  sealedToken: Schema.Struct({ ciphertext: Schema.String, keyId: Schema.String })
})

export const EnvironmentsHandlers = HttpApiBuilder.group(
  Api,
  "environments",
  (handlers) =>
    Effect.gen(function*() {
      const environments = yield* Environments
      const box = yield* SecretBox
      const seal = ({ token, ...environment }: EnvironmentWithToken) =>
        Effect.map(box.seal(Redacted.make(token)), (sealedToken) => ({ ...environment, sealedToken }))
      const open = ({ sealedToken, ...environment }: typeof SealedAnswer.Type) =>
        Effect.map(box.open(sealedToken), (token): EnvironmentWithToken => ({
          ...environment,
          token: Redacted.value(token)
        }))
      return handlers
        .handle("list", ({ query }) => authed((p) => environments.list(p, query)))
        .handle("create", (route) =>
          authed((principal) =>
            Effect.flatMap(
              idempotent(route, SealedAnswer, (p) => Effect.flatMap(environments.create(p, route.payload), seal))(
                principal
              ),
              open
            )
          ))
        .handle("get", ({ params }) => authed((p) => environments.get(p, params.id)))
        .handle("update", ({ params, payload }) => authed((p) => environments.update(p, params.id, payload)))
        .handle("delete", ({ params }) => authed((p) => environments.remove(p, params.id)))
        .handle("rotateToken", (route) =>
          authed((principal) =>
            Effect.flatMap(
              idempotent(
                route,
                SealedAnswer,
                (p) => Effect.flatMap(environments.rotateToken(p, route.params.id), seal)
              )(
                principal
              ),
              open
            )
          ))
    })
)

export const EnvironmentRunnersHandlers = HttpApiBuilder.group(
  Api,
  "environmentRunners",
  (handlers) =>
    Effect.map(Effect.all([RunnerLink, Draining]), ([link, draining]) =>
      handlers
        .handle("poll", ({ headers, payload }) =>
          link.poll(headers.authorization, payload, draining.started).pipe(
            Effect.map((call) => ({ call: Option.getOrNull(call) })),
            envelope,
            // The token is in the headers: the poll stays out of the access log (it is also the heartbeat).
            HttpMiddleware.withLoggerDisabled
          ))
        .handle("result", ({ headers, params, payload }) =>
          link.result(headers.authorization, params.callId, payload).pipe(
            Effect.map((accepted) => ({ accepted })),
            envelope,
            HttpMiddleware.withLoggerDisabled
          )))
)

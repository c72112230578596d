/** Handlers of environments and of their runners' routes (http/EnvironmentsApi.ts). */
import { Effect, Option } from "effect"
import { HttpMiddleware } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Environments } from "../src/environments/Environments.ts"
import { RunnerLink } from "../src/environments/RunnerLink.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { Draining } from "./Draining.ts"
import { envelope } from "./ErrorEnvelope.ts"

export const EnvironmentsHandlers = HttpApiBuilder.group(
  Api,
  "environments",
  (handlers) =>
    Effect.map(Environments, (environments) =>
      handlers
        .handle("list", ({ query }) => authed((p) => environments.list(p, query)))
        // Not replayed by Idempotency-Key: a replay would have to keep the token to answer it again.
        .handle("create", ({ payload }) => authed((p) => environments.create(p, payload)))
        .handle("get", ({ params }) => authed((p) => environments.get(p, params.id)))
        .handle("update", ({ params, payload }) => authed((p) => environments.update(p, params.id, payload)))
        .handle("delete", ({ params }) => authed((p) => environments.remove(p, params.id)))
        .handle("rotateToken", ({ params }) => authed((p) => environments.rotateToken(p, params.id))))
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

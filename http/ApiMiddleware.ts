/**
 * API-level middleware, the contract: the services a handler may use
 * (`CurrentPrincipal`, through `authed`), bearer authentication (401, 429)
 * and the refusal of requests that do not decode (400), which every endpoint
 * may answer with. Their server implementation is in
 * http/ApiMiddlewareHandlers.ts, so the contract (http/Api.ts) and the typed
 * client built from it load no server code.
 */
import { Context, Effect } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { DomainError } from "../domain/Errors.ts"
import type { Principal } from "../domain/Principal.ts"
import { ApiBadRequest, ApiTooManyRequests, ApiUnauthorized, type Envelope, envelope } from "./ErrorEnvelope.ts"

/** The authenticated caller of the current request. */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("svc/CurrentPrincipal") {}

/**
 * The handler of an authenticated endpoint, written as the service call it
 * makes for the caller: `authed((p) => hooks.create(p, payload))`. The call's
 * domain failures become their envelopes (`envelope`); as their type follows
 * the call's, the endpoint must declare each of them or the handler does not compile.
 */
export const authed = <A, E extends DomainError, R>(
  call: (principal: Principal) => Effect.Effect<A, E, R>
): Effect.Effect<A, Envelope<E>, R | CurrentPrincipal> => envelope(Effect.flatMap(CurrentPrincipal, call))

/**
 * Every endpoint refuses a request it cannot decode (400); what else it can
 * answer, each endpoint declares itself (`error: [...]`, docs/design/http.md).
 */
export class ApiFailures extends HttpApiMiddleware.Service<ApiFailures>()("svc/ApiFailures", {
  error: ApiBadRequest
}) {}

export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentPrincipal }>()(
  "svc/Authentication",
  // Lowercase as OpenAPI writes it (Effect's `bearer` says "Bearer", which renderers such as /docs read as Basic);
  // the header's scheme is matched without regard to case either way.
  { security: { bearer: HttpApiSecurity.http({ scheme: "bearer" }) }, error: [ApiUnauthorized, ApiTooManyRequests] }
) {}

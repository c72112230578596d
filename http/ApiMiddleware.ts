/**
 * API-level middleware, the contract: the services a handler may use
 * (`CurrentPrincipal`), bearer authentication and the error envelopes every
 * endpoint may answer with. Their server implementation is in
 * http/ApiMiddlewareHandlers.ts, so the contract (http/Api.ts) and the typed
 * client built from it load no server code.
 */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { Principal } from "../domain/Principal.ts"
import { ApiErrors, ApiTooManyRequests, ApiUnauthorized } from "./ErrorEnvelope.ts"

/** The authenticated caller of the current request. */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("svc/CurrentPrincipal") {}

export class ApiFailures extends HttpApiMiddleware.Service<ApiFailures>()("svc/ApiFailures", {
  error: ApiErrors
}) {}

export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentPrincipal }>()(
  "svc/Authentication",
  { security: { bearer: HttpApiSecurity.bearer }, error: [ApiUnauthorized, ApiTooManyRequests] }
) {}

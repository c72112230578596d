/**
 * The API error envelope, defined once:
 * `{ error: { type, code, message, request_id, details?, reference? } }`.
 * One schema class per status (so the OpenAPI document lists them), the
 * mapping from domain failures, and the raw form used by the router-level
 * rewrite for failures that never reach an endpoint.
 */
import { Context, Effect, Schema } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import type { DomainError } from "../domain/Errors.ts"

export const ErrorBody = Schema.Struct({
  type: Schema.String,
  code: Schema.String,
  message: Schema.String,
  request_id: Schema.String,
  details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  reference: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ErrorBody" })
export type ErrorBody = typeof ErrorBody.Type

const fields = { error: ErrorBody }

/**
 * The status at the type level only. The envelope classes share their fields,
 * so without it TypeScript would take a 404 for a 409; with it a handler that
 * can fail with a status its endpoint does not declare does not compile.
 */
interface Status<S extends number> {
  readonly "~status": S
}

export class ApiBadRequest extends Schema.Error<ApiBadRequest, Status<400>>("ApiBadRequest")(fields, {
  httpApiStatus: 400,
  identifier: "InvalidRequestError"
}) {}
export class ApiPayloadTooLarge extends Schema.Error<ApiPayloadTooLarge, Status<413>>("ApiPayloadTooLarge")(fields, {
  httpApiStatus: 413,
  identifier: "PayloadTooLargeError"
}) {}
export class ApiUnauthorized extends Schema.Error<ApiUnauthorized, Status<401>>("ApiUnauthorized")(fields, {
  httpApiStatus: 401,
  identifier: "AuthenticationError"
}) {}
export class ApiForbidden extends Schema.Error<ApiForbidden, Status<403>>("ApiForbidden")(fields, {
  httpApiStatus: 403,
  identifier: "PermissionError"
}) {}
export class ApiNotFound extends Schema.Error<ApiNotFound, Status<404>>("ApiNotFound")(fields, {
  httpApiStatus: 404,
  identifier: "NotFoundError"
}) {}
export class ApiConflict extends Schema.Error<ApiConflict, Status<409>>("ApiConflict")(fields, {
  httpApiStatus: 409,
  identifier: "ConflictError"
}) {}
export class ApiTooManyRequests extends Schema.Error<ApiTooManyRequests, Status<429>>("ApiTooManyRequests")(fields, {
  httpApiStatus: 429,
  identifier: "RateLimitError"
}) {}
export class ApiBadGateway extends Schema.Error<ApiBadGateway, Status<502>>("ApiBadGateway")(fields, {
  httpApiStatus: 502,
  identifier: "BadGatewayError"
}) {}
export class ApiServiceUnavailable
  extends Schema.Error<ApiServiceUnavailable, Status<503>>("ApiServiceUnavailable")(fields, {
    httpApiStatus: 503,
    identifier: "ServiceUnavailableError"
  })
{}

/** Every envelope class (each endpoint declares the ones it answers with: docs/design/http.md). */
export const ApiErrors = [
  ApiBadRequest,
  ApiPayloadTooLarge,
  ApiUnauthorized,
  ApiForbidden,
  ApiNotFound,
  ApiConflict,
  ApiTooManyRequests,
  ApiBadGateway,
  ApiServiceUnavailable
] as const

/** The request id of the current request (set by the router middleware). */
export const CurrentRequestId = Context.Reference<string>("svc/CurrentRequestId", { defaultValue: () => "req_unknown" })

const body = (
  requestId: string,
  type: string,
  code: string,
  message: string,
  details?: Record<string, unknown>
): ErrorBody =>
  details === undefined
    ? { type, code, message, request_id: requestId }
    : { type, code, message, request_id: requestId, details }

export const unauthorized = (requestId: string, message: string): ApiUnauthorized =>
  new ApiUnauthorized({ error: body(requestId, "authentication_error", "invalid_api_key", message) })

/** The 429 envelope; `type` is `insufficient_quota` for that code, else `rate_limit_error` (spec 7). */
export const tooManyRequests = (requestId: string, code: string, message: string): ApiTooManyRequests =>
  new ApiTooManyRequests({
    error: body(requestId, code === "insufficient_quota" ? "insufficient_quota" : "rate_limit_error", code, message)
  })

/** Sets `Retry-After` (whole seconds, at least 1) on the response of the current request. */
export const retryAfter = (seconds: number): Effect.Effect<void> =>
  Effect.withFiber((fiber) =>
    Effect.sync(() =>
      HttpEffect.appendPreResponseHandlerUnsafe(
        fiber.context,
        (_request, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(Math.max(1, Math.ceil(seconds)))))
      )
    )
  )

/** The envelope class each domain failure becomes: `Envelope<E>`, the type of `envelope`, follows from it. */
const envelopeClass = {
  InvalidRequest: ApiBadRequest,
  PayloadTooLarge: ApiPayloadTooLarge,
  Unauthenticated: ApiUnauthorized,
  PermissionDenied: ApiForbidden,
  NotFound: ApiNotFound,
  Conflict: ApiConflict,
  Unavailable: ApiServiceUnavailable,
  UpstreamFailed: ApiBadGateway,
  RateLimited: ApiTooManyRequests,
  InsufficientQuota: ApiTooManyRequests
} as const

/** The envelope classes a failure of type `E` can become (`NotFound | Conflict` -> `ApiNotFound | ApiConflict`). */
export type Envelope<E extends DomainError> = InstanceType<(typeof envelopeClass)[E["_tag"]]>

const errorBody = (e: DomainError, requestId: string): ErrorBody => {
  switch (e._tag) {
    case "InvalidRequest":
    case "PayloadTooLarge":
      return body(requestId, "invalid_request_error", e.code, e.message, e.details)
    case "Unauthenticated":
      return body(requestId, "authentication_error", "invalid_api_key", e.message)
    case "PermissionDenied":
      return body(requestId, "permission_error", "permission_denied", e.message)
    case "NotFound":
      return body(requestId, "not_found", e.code, e.message)
    case "Conflict":
      return body(requestId, "api_error", e.code, e.message, e.details)
    case "Unavailable":
    case "UpstreamFailed":
      return body(requestId, "api_error", e.code, e.message)
    case "RateLimited":
      return body(requestId, "rate_limit_error", e.code, e.message)
    case "InsufficientQuota":
      return body(requestId, "insufficient_quota", "insufficient_quota", e.message)
  }
}

export const fromDomain = <E extends DomainError>(e: E, requestId: string): Envelope<E> =>
  // The class is the one envelopeClass gives this tag, as Envelope<E> says; TypeScript cannot follow a generic tag.
  new envelopeClass[e._tag]({ error: errorBody(e, requestId) }) as Envelope<E>

/**
 * Maps a handler's domain failures to envelopes carrying the request id. The
 * error type follows the failures (`Envelope<E>`), so an endpoint has to
 * declare each envelope its service can fail with.
 */
export const envelope = <A, E extends DomainError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Envelope<E>, R> =>
  Effect.catch(effect, (e) =>
    Effect.flatMap(CurrentRequestId, (id) => {
      const failure: DomainError = e
      return Effect.andThen(
        failure._tag === "RateLimited" || failure._tag === "InsufficientQuota"
          ? retryAfter(failure.retryAfterSeconds)
          : Effect.void,
        Effect.fail(fromDomain(e, id))
      )
    }))

/** The `type` the spec's table gives a status. */
export const typeForStatus = (status: number): string => {
  if (status === 401) return "authentication_error"
  if (status === 403) return "permission_error"
  if (status === 404) return "not_found"
  if (status === 429) return "rate_limit_error"
  if (status === 408 || status === 409 || status >= 500) return "api_error"
  return "invalid_request_error"
}

/** An envelope response built outside any endpoint (router-level failures). */
export const rawEnvelope = (
  status: number,
  code: string,
  message: string,
  requestId: string,
  extra?: { readonly details?: Record<string, unknown>; readonly reference?: string }
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(
    { error: { type: typeForStatus(status), code, message, request_id: requestId, ...extra } },
    { status }
  )

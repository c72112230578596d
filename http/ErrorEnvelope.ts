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

export class ApiBadRequest extends Schema.Error<ApiBadRequest>("ApiBadRequest")(fields, {
  httpApiStatus: 400,
  identifier: "InvalidRequestError"
}) {}
export class ApiPayloadTooLarge extends Schema.Error<ApiPayloadTooLarge>("ApiPayloadTooLarge")(fields, {
  httpApiStatus: 413,
  identifier: "PayloadTooLargeError"
}) {}
export class ApiUnauthorized extends Schema.Error<ApiUnauthorized>("ApiUnauthorized")(fields, {
  httpApiStatus: 401,
  identifier: "AuthenticationError"
}) {}
export class ApiForbidden extends Schema.Error<ApiForbidden>("ApiForbidden")(fields, {
  httpApiStatus: 403,
  identifier: "PermissionError"
}) {}
export class ApiNotFound extends Schema.Error<ApiNotFound>("ApiNotFound")(fields, {
  httpApiStatus: 404,
  identifier: "NotFoundError"
}) {}
export class ApiConflict extends Schema.Error<ApiConflict>("ApiConflict")(fields, {
  httpApiStatus: 409,
  identifier: "ConflictError"
}) {}
export class ApiTooManyRequests extends Schema.Error<ApiTooManyRequests>("ApiTooManyRequests")(fields, {
  httpApiStatus: 429,
  identifier: "RateLimitError"
}) {}
export class ApiBadGateway extends Schema.Error<ApiBadGateway>("ApiBadGateway")(fields, {
  httpApiStatus: 502,
  identifier: "BadGatewayError"
}) {}
export class ApiServiceUnavailable extends Schema.Error<ApiServiceUnavailable>("ApiServiceUnavailable")(fields, {
  httpApiStatus: 503,
  identifier: "ServiceUnavailableError"
}) {}

/** Every envelope class an endpoint may answer with. */
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
export type ApiError = InstanceType<(typeof ApiErrors)[number]>

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

export const fromDomain = (e: DomainError, requestId: string): ApiError => {
  switch (e._tag) {
    case "InvalidRequest":
      return new ApiBadRequest({ error: body(requestId, "invalid_request_error", e.code, e.message, e.details) })
    case "PayloadTooLarge":
      return new ApiPayloadTooLarge({ error: body(requestId, "invalid_request_error", e.code, e.message, e.details) })
    case "Unauthenticated":
      return unauthorized(requestId, e.message)
    case "PermissionDenied":
      return new ApiForbidden({ error: body(requestId, "permission_error", "permission_denied", e.message) })
    case "NotFound":
      return new ApiNotFound({ error: body(requestId, "not_found", e.code, e.message) })
    case "Conflict":
      return new ApiConflict({ error: body(requestId, "api_error", e.code, e.message, e.details) })
    case "Unavailable":
      return new ApiServiceUnavailable({ error: body(requestId, "api_error", e.code, e.message) })
    case "UpstreamFailed":
      return new ApiBadGateway({ error: body(requestId, "api_error", e.code, e.message) })
    case "RateLimited":
      return tooManyRequests(requestId, e.code, e.message)
    case "InsufficientQuota":
      return tooManyRequests(requestId, "insufficient_quota", e.message)
  }
}

/** Maps a handler's domain failures to envelopes carrying the request id. */
export const envelope = <A, R>(effect: Effect.Effect<A, DomainError, R>): Effect.Effect<A, ApiError, R> =>
  Effect.catch(effect, (e) =>
    Effect.flatMap(CurrentRequestId, (id) =>
      Effect.andThen(
        e._tag === "RateLimited" || e._tag === "InsufficientQuota" ? retryAfter(e.retryAfterSeconds) : Effect.void,
        Effect.fail(fromDomain(e, id))
      )))

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

/**
 * API-level middleware, the server side: request decoding failures become 400
 * envelopes that name each offending field (404 for a path id that cannot
 * exist), requests carrying NUL characters are refused, and bearer
 * authentication provides the caller.
 */
import { Effect, Layer, Option, Redacted, type SchemaIssue } from "effect"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { type HttpApiEndpoint, HttpApiError } from "effect/http-api"
import { NotFound } from "../domain/Errors.ts"
import { NotFoundResource } from "../domain/Ids.ts"
import { ApiKeys } from "../src/access/ApiKeys.ts"
import { RateLimiter } from "../src/access/RateLimiter.ts"
import { ApiFailures, Authentication, CurrentPrincipal } from "./ApiMiddleware.ts"
import { findTooDeep, MaxBodyDepth } from "./BodyDepth.ts"
import {
  ApiBadRequest,
  CurrentRequestId,
  rawEnvelope,
  retryAfter,
  tooManyRequests,
  unauthorized
} from "./ErrorEnvelope.ts"
import { fieldIssues, issueLine } from "./FieldIssues.ts"
import { findNul } from "./NulGuard.ts"

const slotName: Record<HttpApiError.HttpApiSchemaError["kind"], string> = {
  Params: "path",
  Headers: "header",
  Query: "query",
  Body: "body",
  Payload: "body",
  ResponseHeaders: "response"
}

export const describeSchemaError = (error: HttpApiError.HttpApiSchemaError) => {
  const slot = slotName[error.kind]
  const issues = fieldIssues(error.cause.issue)
  const errors = issues.map((issue) => ({
    field: issue.field === "" ? slot : issue.field,
    location: slot,
    message: issue.message
  }))
  return { message: `Invalid request ${slot}: ${issueLine(issues)}`, errors }
}

interface FieldError {
  readonly field: string
  readonly location: string
  readonly message: string
}

const badRequest = (requestId: string, message: string, errors: ReadonlyArray<FieldError>) => {
  const field = errors[0]?.field
  return new ApiBadRequest({
    error: {
      type: "invalid_request_error",
      code: "invalid_request_error",
      message,
      request_id: requestId,
      details: field === undefined ? { errors } : { field, errors }
    }
  })
}

/** The path parameter a failed id check names, and the resource its annotation gives (domain/Ids.ts). */
const unknownResource = (
  issue: SchemaIssue.Issue,
  param: PropertyKey | undefined = undefined
): { readonly param: PropertyKey | undefined; readonly resource: string } | undefined => {
  switch (issue._tag) {
    case "Pointer":
      return unknownResource(issue.issue, issue.path[0] ?? param)
    case "Filter": {
      const resource = issue.filter.annotations?.[NotFoundResource]
      return typeof resource === "string" ? { param, resource } : unknownResource(issue.issue, param)
    }
    case "Encoding":
      return unknownResource(issue.issue, param)
    case "Composite":
    case "AnyOf":
      for (const inner of issue.issues) {
        const found = unknownResource(inner, param)
        if (found !== undefined) return found
      }
      return undefined
    default:
      return undefined
  }
}

/**
 * A path id that cannot exist (wrong prefix or characters, a NUL) names no
 * resource: 404 `<resource>_not_found`, as an unknown id, without a query.
 * Answered here rather than failed with: this middleware declares 400 only,
 * and only the endpoints with an id in their path declare (and list) 404.
 */
const notFound = (error: HttpApiError.HttpApiSchemaError, requestId: string) =>
  Effect.gen(function*() {
    const found = error.kind === "Params" ? unknownResource(error.cause.issue) : undefined
    if (found === undefined) return undefined
    const route = yield* HttpRouter.RouteContext
    const id = typeof found.param === "string" ? route.params[found.param] ?? "" : ""
    const { code, message } = NotFound.of(found.resource, id)
    return rawEnvelope(404, code, message, requestId)
  })

const schemaFailure = (error: HttpApiError.HttpApiSchemaError) =>
  Effect.gen(function*() {
    const requestId = yield* CurrentRequestId
    const missing = yield* notFound(error, requestId)
    if (missing !== undefined) return missing
    const { message, errors } = describeSchemaError(error)
    return yield* badRequest(requestId, message, errors)
  })

const refuse = (location: string, field: string, message: string, reason: string) =>
  Effect.flatMap(
    CurrentRequestId,
    (requestId) =>
      Effect.fail(
        badRequest(requestId, `Invalid request ${location}: ${message}`, [{ field, location, message: reason }])
      )
  )

/**
 * A route without query parameters takes none: the first one sent is named.
 * (Routes with some reject the unknown ones as they decode: QueryParseOptions in http/Api.ts.)
 */
const unexpectedQuery = (endpoint: HttpApiEndpoint.Top) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    if (endpoint.query !== undefined) return undefined
    const first = new URL(request.url, "http://localhost").searchParams.keys().next()
    return first.done === true ? undefined : first.value
  })

/**
 * Before the endpoint decodes anything: a JSON body nested deeper than
 * MaxBodyDepth is 400 naming its field (http/BodyDepth.ts, first: nothing
 * after it walks such a body), a NUL in the query or the JSON body is 400
 * naming where it was (http/NulGuard.ts), so is a query parameter on a route
 * that takes none. Then decoding failures become envelopes: 404 for a path id
 * that cannot exist, 400 naming every field otherwise.
 */
export const layerApiFailures = Layer.succeed(ApiFailures)((httpEffect, { endpoint }) =>
  Effect.gen(function*() {
    const deep = yield* findTooDeep
    if (Option.isSome(deep)) {
      return yield* refuse(
        "body",
        deep.value,
        `${deep.value} is nested deeper than ${MaxBodyDepth} levels.`,
        `must not be nested deeper than ${MaxBodyDepth} levels`
      )
    }
    const nul = yield* findNul
    if (Option.isSome(nul)) {
      const { field, location } = nul.value
      return yield* refuse(
        location,
        field,
        `${field} contains a NUL character (U+0000), which is not accepted.`,
        "must not contain a NUL character (U+0000)"
      )
    }
    const unexpected = yield* unexpectedQuery(endpoint)
    if (unexpected !== undefined) {
      return yield* refuse(
        "query",
        unexpected,
        `unknown parameter '${unexpected}': this route takes no query parameters.`,
        "Unexpected key"
      )
    }
    return yield* httpEffect
  }).pipe(
    Effect.catch((e) => (HttpApiError.HttpApiSchemaError.is(e) ? schemaFailure(e) : Effect.fail(e)))
  )
)

/**
 * Bearer authentication, then the caller's request rates: every response to
 * an authenticated request carries the `RateLimit-*` headers of its tightest
 * bucket, and a request over a limit is 429 with `Retry-After`.
 */
export const layerAuthentication = Layer.effect(Authentication)(
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const limiter = yield* RateLimiter
    return {
      bearer: (httpEffect, { credential }) =>
        Effect.gen(function*() {
          const requestId = yield* CurrentRequestId
          if (Redacted.value(credential) === "") {
            return yield* unauthorized(requestId, "Missing API key: send 'Authorization: Bearer <api key>'.")
          }
          const principal = yield* keys.authenticate(credential).pipe(
            Effect.mapError((e) => unauthorized(requestId, e.message))
          )
          const rate = yield* limiter.admit(principal)
          const headers = Object.entries(rate.headers)
          if (headers.length > 0) {
            yield* HttpEffect.appendPreResponseHandler((_request, response) =>
              Effect.succeed(HttpServerResponse.setHeaders(response, headers))
            )
          }
          if (rate.refused !== undefined) {
            yield* retryAfter(rate.refused.retryAfterSeconds)
            return yield* tooManyRequests(requestId, rate.refused.code, rate.refused.message)
          }
          return yield* Effect.provideService(httpEffect, CurrentPrincipal, principal)
        })
    }
  })
)

/**
 * API-level middleware: request decoding failures become 400 envelopes that
 * name each offending field, and bearer authentication provides the caller.
 */
import { Context, Effect, Layer, Redacted, SchemaIssue } from "effect"
import type { HttpApiError } from "effect/http-api"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { Principal } from "../domain/Principal.ts"
import { ApiKeys } from "../src/auth/ApiKeys.ts"
import { ApiBadRequest, ApiErrors, ApiUnauthorized, CurrentRequestId, unauthorized } from "./ErrorEnvelope.ts"

/** The authenticated caller of the current request. */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("svc/CurrentPrincipal") {}

export class ApiFailures extends HttpApiMiddleware.Service<ApiFailures>()("svc/ApiFailures", {
  error: ApiErrors
}) {}

export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentPrincipal }>()(
  "svc/Authentication",
  { security: { bearer: HttpApiSecurity.bearer }, error: ApiUnauthorized }
) {}

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const slotName: Record<HttpApiError.HttpApiSchemaError["kind"], string> = {
  Params: "path",
  Headers: "header",
  Query: "query",
  Body: "body",
  Payload: "body",
  ResponseHeaders: "response"
}

/** `capabilities.mcp.toolServerIds[0]`-style paths. */
const fieldPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path.reduce<string>((acc, segment) => {
    const key = typeof segment === "object" ? segment.key : segment
    if (typeof key === "number") return `${acc}[${key}]`
    return acc === "" ? String(key) : `${acc}.${String(key)}`
  }, "")

export const describeSchemaError = (error: HttpApiError.HttpApiSchemaError) => {
  const slot = slotName[error.kind]
  const errors = formatIssues(error.cause.issue).issues.map((issue) => {
    const field = fieldPath(issue.path ?? [])
    return { field: field === "" ? slot : field, location: slot, message: issue.message }
  })
  const listed = errors.map((e) => (e.field === slot ? e.message : `${e.field}: ${e.message}`)).join("; ")
  return { message: `Invalid request ${slot}: ${listed}`, errors }
}

export const layerApiFailures = HttpApiMiddleware.layerSchemaErrorTransform(ApiFailures, (error) =>
  Effect.flatMap(CurrentRequestId, (requestId) => {
    const { message, errors } = describeSchemaError(error)
    const field = errors[0]?.field
    return Effect.fail(
      new ApiBadRequest({
        error: {
          type: "invalid_request_error",
          code: "invalid_request_error",
          message,
          request_id: requestId,
          details: field === undefined ? { errors } : { field, errors }
        }
      })
    )
  }))

export const layerAuthentication = Layer.effect(Authentication)(
  Effect.gen(function*() {
    const keys = yield* ApiKeys
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
          return yield* Effect.provideService(httpEffect, CurrentPrincipal, principal)
        })
    }
  })
)

/**
 * What a client call can fail with, as two typed errors:
 *
 * - `ServiceError`: the service answered with its error envelope. It carries
 *   the HTTP status and the envelope's fields as sent (`type`, `code`,
 *   `message`, `request_id`, and `details` / `reference` when present).
 * - `ClientError`: no envelope to show: the service could not be reached or
 *   the connection broke (`connection`), the request was refused before it
 *   was sent because it breaks the contract (`invalid_request`), or the
 *   answer is not what the contract says (`invalid_response`).
 *
 * `toFailure` turns any failure of the contract's typed client into one of them.
 */
import { Effect, Option, Schema, SchemaAST, type SchemaIssue } from "effect"
import { HttpClientError } from "effect/http"
import { ApiErrors, ErrorBody } from "../http/ErrorEnvelope.ts"
import { fieldIssues, issueLine } from "../http/FieldIssues.ts"

export class ServiceError extends Schema.TaggedError<ServiceError>()("ServiceError", {
  status: Schema.Number,
  type: Schema.String,
  code: Schema.String,
  message: Schema.String,
  request_id: Schema.String,
  details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  reference: Schema.optionalKey(Schema.String)
}) {
  static fromEnvelope(status: number, body: ErrorBody): ServiceError {
    return new ServiceError({ status, ...body })
  }
}

export const ClientErrorKind = Schema.Literals(["connection", "invalid_request", "invalid_response"])
export type ClientErrorKind = typeof ClientErrorKind.Type

export class ClientError extends Schema.TaggedError<ClientError>()("ClientError", {
  kind: ClientErrorKind,
  message: Schema.String,
  /** The HTTP status of an answer that was not an envelope (a proxy's 502 page, say). */
  status: Schema.optionalKey(Schema.Number),
  cause: Schema.optionalKey(Schema.Defect())
}) {}

export type Failure = ServiceError | ClientError

/** Worth trying again after a pause: the connection failed, or a gateway or a draining node answered. */
export const isRetryable = (failure: Failure): boolean =>
  (failure._tag === "ClientError" && failure.kind === "connection") ||
  (failure.status !== undefined && [502, 503, 504].includes(failure.status))

const describeIssue = (issue: SchemaIssue.Issue) => issueLine(fieldIssues(issue))

/** A request refused locally because it breaks the contract's schema (worded as the service words it). */
export const invalidRequest = (what: string, error: Schema.SchemaError): ClientError =>
  new ClientError({ kind: "invalid_request", message: `Invalid ${what}: ${describeIssue(error.issue)}` })

/** The status an envelope class answers with (its `httpApiStatus` annotation, http/ErrorEnvelope.ts). */
const statusOf = (ast: SchemaAST.AST): number => SchemaAST.resolveAt<number>("httpApiStatus")(ast) ?? 500

const decodeEnvelope = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({ error: ErrorBody })))

/**
 * An error status the contract does not declare (a 500 after a defect, a 413
 * from the body limit): the service still answers with an envelope; anything
 * else in front of it may not.
 */
const fromUndeclared = (status: number, body: string): Failure =>
  Option.match(decodeEnvelope(body), {
    onSome: ({ error }) => ServiceError.fromEnvelope(status, error),
    onNone: () =>
      new ClientError({
        kind: "invalid_response",
        status,
        message: `HTTP ${status} without an error envelope: ${body.slice(0, 200)}`
      })
  })

/** The innermost message of an error's `cause` chain (`connect ECONNREFUSED ...` under `fetch failed`). */
const rootCause = (error: unknown): string | undefined => {
  let message: string | undefined
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) message = e.message
  return message
}

const fromHttpClientError = (error: HttpClientError.HttpClientError): Effect.Effect<never, Failure> => {
  const reason = error.reason
  switch (reason._tag) {
    case "TransportError": {
      const cause = rootCause(reason.cause)
      return Effect.fail(
        new ClientError({
          kind: "connection",
          message: cause === undefined ? reason.message : `${reason.message}: ${cause}`,
          cause: reason
        })
      )
    }
    case "EncodeError":
    case "InvalidUrlError":
      return Effect.fail(new ClientError({ kind: "invalid_request", message: reason.message, cause: reason }))
    default: {
      const response = reason.response
      if (response.status < 400) {
        return Effect.fail(new ClientError({ kind: "invalid_response", message: reason.message, cause: reason }))
      }
      return response.text.pipe(
        Effect.orElseSucceed(() => ""),
        Effect.flatMap((text) => Effect.fail(fromUndeclared(response.status, text)))
      )
    }
  }
}

/**
 * Normalizes a failure of the typed client: the contract's envelope classes
 * (one per status), errors of the HTTP client (no response, an undeclared
 * status, an unreadable body) and schema failures. A schema failure is
 * reported as `invalid_response`: the Promise client and the CLI check every
 * input against the contract before sending, so only an answer can fail one.
 */
export const toFailure = (error: unknown): Effect.Effect<never, Failure> => {
  if (error instanceof ServiceError || error instanceof ClientError) return Effect.fail(error)
  for (const envelope of ApiErrors) {
    if (error instanceof envelope) return Effect.fail(ServiceError.fromEnvelope(statusOf(envelope.ast), error.error))
  }
  if (HttpClientError.isHttpClientError(error)) return fromHttpClientError(error)
  if (Schema.isSchemaError(error)) {
    return Effect.fail(
      new ClientError({
        kind: "invalid_response",
        message: `The answer does not match the API contract: ${describeIssue(error.issue)}`
      })
    )
  }
  return Effect.fail(new ClientError({ kind: "invalid_response", message: String(error), cause: error }))
}

/** `Effect.catch(toFailure)`: the effect's failures as `ServiceError` or `ClientError`. */
export const normalized = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Failure, R> =>
  Effect.catch(effect, toFailure)

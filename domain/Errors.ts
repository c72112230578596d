/**
 * The failures the API talks about. Each carries the spec's error `code`; the
 * HTTP layer (http/ErrorEnvelope.ts) maps each class to its status and `type`.
 */
import { Schema } from "effect"

const Details = Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))

/** 400: the request is malformed or breaks a rule. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  code: Schema.String,
  message: Schema.String,
  details: Details
}) {
  static of(message: string, details?: Record<string, unknown>, code = "invalid_request_error"): InvalidRequest {
    return new InvalidRequest(details === undefined ? { code, message } : { code, message, details })
  }
  /** A rule broken by one field of the body; `details.field` names it. */
  static forField(field: string, message: string, code = "invalid_request_error"): InvalidRequest {
    return new InvalidRequest({ code, message, details: { field } })
  }
  /** A query parameter the route cannot use, described as decoding failures are (`details.errors`). */
  static forQuery(field: string, message: string): InvalidRequest {
    return new InvalidRequest({
      code: "invalid_request_error",
      message,
      details: { field, errors: [{ field, location: "query", message }] }
    })
  }
}

/** 413: a body or an item of it is larger than this deployment stores (`file_too_large`, ...); `details.field` names it. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  code: Schema.String,
  message: Schema.String,
  details: Details
}) {}

/** 401: missing, malformed or unknown API key. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  message: Schema.String
}) {}

/** 403: the resource exists but belongs to another workspace. */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>()("PermissionDenied", {
  message: Schema.String
}) {}

/** 404: the resource does not exist (or was deleted). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  code: Schema.String,
  message: Schema.String
}) {
  static of(resource: string, id: string): NotFound {
    return new NotFound({
      code: `${resource}_not_found`,
      message: `No ${resource.replaceAll("_", " ")} with id '${id}'.`
    })
  }
}

/** 409: the request conflicts with the current state (name_conflict, thread_busy, ...). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  code: Schema.String,
  message: Schema.String,
  details: Details
}) {}

/** 503: retry later (for example an idempotent request still in flight). */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", {
  code: Schema.String,
  message: Schema.String
}) {}

/** 502: a peer this service talks to failed (test routes). */
export class UpstreamFailed extends Schema.TaggedError<UpstreamFailed>()("UpstreamFailed", {
  code: Schema.String,
  message: Schema.String
}) {}

/**
 * 429 `rate_limit_error`: too many requests (`rate_limited`) or too many active
 * runs (`quota_exceeded`); retry after `retryAfterSeconds` (the `Retry-After` header).
 */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  code: Schema.Literals(["rate_limited", "quota_exceeded"]),
  message: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}

/** 429 `insufficient_quota`: the organization's spend quota for the period is used up; it renews after `retryAfterSeconds`. */
export class InsufficientQuota extends Schema.TaggedError<InsufficientQuota>()("InsufficientQuota", {
  message: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}

export type DomainError =
  | InvalidRequest
  | PayloadTooLarge
  | Unauthenticated
  | PermissionDenied
  | NotFound
  | Conflict
  | Unavailable
  | UpstreamFailed
  | RateLimited
  | InsufficientQuota

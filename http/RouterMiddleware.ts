/**
 * The global router middleware: the one place that sees every response. It
 * mints the request id (`X-Request-Id`, `req_...`), caps the body size, and
 * rewrites every failure that never reached an endpoint (unknown route, wrong
 * method, unsupported content type, body too large, unparsable body, defects)
 * into the error envelope. It tells `observe` of every answer with its final
 * status and route template (metrics, the access log: http/RequestTelemetry.ts).
 */
import { ByteSize, Cause, Clock, Effect, Layer, type Types } from "effect"
import {
  HttpIncomingMessage,
  HttpRouter,
  HttpServerError,
  HttpServerRequest,
  HttpServerRespondable,
  HttpServerResponse
} from "effect/http"
import { IdGenerator } from "../src/IdGenerator.ts"
import { CurrentRequestId, rawEnvelope } from "./ErrorEnvelope.ts"
import { matcher, type RouteTable, Unmatched } from "./RouteTable.ts"

export type { RouteTable } from "./RouteTable.ts"

/** What the middleware reports of every answered request (metrics, the access log). */
export interface Answered {
  readonly method: string
  readonly path: string
  /** The route template, `unmatched` when no route matched. */
  readonly route: string
  readonly status: number
  readonly requestId: string
  readonly seconds: number
}

const isJsonBody = (response: HttpServerResponse.HttpServerResponse): boolean =>
  response.body._tag === "Uint8Array" && (response.headers["content-type"] ?? "").startsWith("application/json")

const statusMessages: Record<number, readonly [code: string, message: string]> = {
  400: [
    "invalid_request_error",
    "The request body could not be parsed: send valid JSON with Content-Type: application/json."
  ],
  404: ["route_not_found", "No route matches this path."],
  413: ["request_too_large", "The request body is too large."],
  415: ["unsupported_media_type", "Unsupported Content-Type: send the body as application/json."]
}

const multipartMessage = "Unsupported Content-Type: send the body as multipart/form-data with one part named 'file'."

export const layer = (
  api: RouteTable,
  options: {
    readonly maxBodyBytes: number
    readonly extraRoutes: ReadonlyArray<readonly [string, string]>
    /** Path prefixes whose responses are someone else's (previews): their status and body are kept as they are. */
    readonly passThrough?: ReadonlyArray<string>
    /** Paths whose body is multipart/form-data (uploads): their 415 says so. */
    readonly multipartPaths?: ReadonlyArray<string>
    /** Told of every answered request, with its final status. */
    readonly observe?: (answered: Answered) => Effect.Effect<void>
  }
): Layer.Layer<never, never, HttpRouter.HttpRouter | IdGenerator> => {
  const routes = matcher(api, [
    ...options.extraRoutes,
    ...(options.passThrough ?? []).map((p) => ["*", `${p}*`] as const)
  ])
  const maxBody = ByteSize.bytes(options.maxBodyBytes)
  const passThrough = options.passThrough ?? []
  const observe = options.observe
  const { allowedMethods } = routes

  const internalError = (ids: IdGenerator["Service"], cause: Cause.Cause<unknown>, requestId: string) =>
    Effect.gen(function*() {
      const reference = yield* ids.make("incident")
      yield* Effect.logError("unhandled failure", cause).pipe(
        Effect.annotateLogs({ reference, request_id: requestId })
      )
      return rawEnvelope(
        500,
        "internal_error",
        "An internal error occurred; quote error.reference when reporting it.",
        requestId,
        {
          reference
        }
      )
    })

  const rewrite = (
    ids: IdGenerator["Service"],
    response: HttpServerResponse.HttpServerResponse,
    requestId: string,
    path: string
  ) => {
    if (response.status < 400 || isJsonBody(response) || passThrough.some((p) => path.startsWith(p))) {
      return Effect.succeed(response)
    }
    if (response.status === 404) {
      const allowed = allowedMethods(path)
      if (allowed.length > 0) {
        return Effect.succeed(
          HttpServerResponse.setHeader(
            rawEnvelope(
              405,
              "method_not_allowed",
              `This route does not accept this method; allowed: ${allowed.join(", ")}.`,
              requestId
            ),
            "allow",
            allowed.join(", ")
          )
        )
      }
    }
    if (response.status >= 500) return internalError(ids, Cause.fail("empty 5xx response"), requestId)
    if (response.status === 415 && (options.multipartPaths ?? []).includes(path.replace(/\/$/, ""))) {
      return Effect.succeed(rawEnvelope(415, "unsupported_media_type", multipartMessage, requestId))
    }
    const [code, message] = statusMessages[response.status] ?? ["invalid_request_error", "The request was rejected."]
    return Effect.succeed(rawEnvelope(response.status, code, message, requestId))
  }

  return HttpRouter.middleware(
    Effect.map(
      Effect.service(IdGenerator),
      (ids) => (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const startedNanos = observe === undefined ? 0n : yield* Clock.currentTimeNanos
          const requestId = yield* ids.make("request")
          yield* Effect.annotateCurrentSpan("svc.request_id", requestId)
          const path = new URL(request.url, "http://localhost").pathname
          const response = yield* httpEffect.pipe(
            Effect.annotateLogs({ request_id: requestId }),
            Effect.provideService(CurrentRequestId, requestId),
            Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBody),
            Effect.catchCause((cause) => {
              if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
              // Router and body-reading failures (unknown route, unparsable or oversized body) know their
              // status; HttpApi turns some into defects, so look at both. rewrite() gives them the envelope.
              const known = httpServerError(cause)
              if (known !== undefined) {
                return HttpServerRespondable.toResponse(known).pipe(
                  Effect.flatMap((response) =>
                    response.status >= 500 ? internalError(ids, cause, requestId) : Effect.succeed(response)
                  )
                )
              }
              return internalError(ids, cause, requestId)
            }),
            Effect.flatMap((response) => rewrite(ids, response, requestId, path))
          )
          if (observe !== undefined) {
            const seconds = Number((yield* Clock.currentTimeNanos) - startedNanos) / 1e9
            const route = routes.route(request.method, path) ?? Unmatched
            yield* observe({ method: request.method, path, route, status: response.status, requestId, seconds })
          }
          return HttpServerResponse.setHeader(response, "x-request-id", requestId)
        })
    ),
    { global: true }
  )
}

const httpServerError = (cause: Cause.Cause<unknown>): HttpServerError.HttpServerError | undefined => {
  for (const reason of cause.reasons) {
    const value = Cause.isFailReason(reason) ? reason.error : Cause.isDieReason(reason) ? reason.defect : undefined
    if (value instanceof HttpServerError.HttpServerError) return value
  }
  return undefined
}

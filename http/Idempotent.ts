/**
 * `Idempotency-Key` on a POST route, written once: the route's service call
 * wrapped in the Idempotency service (src/access/Idempotency.ts), so that a
 * retry with the same key and body answers the first answer, another body
 * under the key is 409 `idempotency_key_conflict` and a retry while the first
 * still runs is 503 `service_unavailable`. Used inside `authed`:
 *
 *     .handle("create", (route) => authed(idempotent(route, Secret, (p) => secrets.create(p, route.payload))))
 *
 * The record is the caller's organization and workspace, the method, the
 * path as sent (ids included: rotating two secrets under one key is two
 * requests) and the key; the body is the decoded payload, canonical (an
 * upload passes a digest of its bytes instead). The endpoint declares
 * `IdempotencyHeaders` and its 409 and 503.
 */
import { Effect, type Schema } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { Principal } from "../domain/Principal.ts"
import { Idempotency, type IdempotencyError } from "../src/access/Idempotency.ts"

/** What `idempotent` reads of the route's request: its method and path, the key, the body. */
export interface KeyedRoute {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly headers: { readonly "idempotency-key"?: string | undefined }
  readonly payload?: unknown
}

/** The path without its query string. */
const pathOf = (url: string): string => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/**
 * The call, run once per key: `schema` stores its answer (routes answering
 * 200; a route with another status or a replay that differs uses the
 * Idempotency service itself, as `POST /v1/threads` does).
 */
export const idempotent = <A, E, R>(
  route: KeyedRoute,
  schema: Schema.Codec<A, unknown>,
  call: (principal: Principal) => Effect.Effect<A, E, R>
) =>
(principal: Principal): Effect.Effect<A, E | IdempotencyError, R | Idempotency> =>
  Effect.flatMap(Idempotency, (idempotency) =>
    idempotency.run(
      {
        principal,
        method: route.request.method,
        path: pathOf(route.request.url),
        key: route.headers["idempotency-key"],
        body: route.payload
      },
      { schema, status: 200 },
      call(principal)
    ))

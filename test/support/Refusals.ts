/**
 * The refusals every resource of the API shares, asserted whole (status,
 * type, code and request id, through `TestServer.expectError`): 400 naming
 * the offending field, 404 `<kind>_not_found` for an id that does not exist,
 * 403 permission_denied for another tenant's resource. Also what a table of
 * such refusals runs over: the routes that address one resource by id, and
 * the tenants other than key a's.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import type { ErrorBody } from "../../http/ErrorEnvelope.ts"
import * as TestServer from "./TestServer.ts"

/** A 400 with `code` (invalid_request_error unless given) whose `details.field` is `field`. */
export const expectInvalid = (
  reply: TestServer.Reply,
  field: string,
  code = "invalid_request_error"
): Effect.Effect<ErrorBody> =>
  Effect.gen(function*() {
    const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", code)
    assert.strictEqual(error.details?.["field"], field, reply.text)
    return error
  })

/** A 404 not_found with the resource kind's own code (`agent_not_found`, ...). */
export const expectNotFound = (reply: TestServer.Reply, code: string): Effect.Effect<ErrorBody> =>
  TestServer.expectError(reply, 404, "not_found", code)

/** A 403 permission_denied: the resource exists, in another workspace. */
export const expectDenied = (reply: TestServer.Reply): Effect.Effect<ErrorBody> =>
  TestServer.expectError(reply, 403, "permission_error", "permission_denied")

// ---- what refusal tables run over -----------------------------------------------

export interface Tenant {
  readonly name: string
  readonly key: string
}

/** The seeded keys other than key a (org_acme / prod): neither may touch key a's resources, nor key a theirs. */
export const otherTenants: ReadonlyArray<Tenant> = [
  { name: "key b (same organization, other workspace)", key: TestServer.Keys.b },
  { name: "key c (other organization, same workspace name)", key: TestServer.Keys.c }
]

/** A route that addresses one resource by its id, with a body it would accept. */
export interface IdRoute {
  /** `PATCH /v1/agents/:id`, as a table names its case. */
  readonly label: string
  readonly method: string
  readonly path: (id: string) => string
  readonly body?: ((id: string) => unknown) | undefined
}

/** A route whose body (if any) does not depend on the id. */
export const idRoute = (method: string, path: (id: string) => string, body?: unknown): IdRoute => ({
  label: `${method} ${path(":id")}`,
  method,
  path,
  body: body === undefined ? undefined : () => body
})

/** GET, PATCH (with `patch`) and DELETE of `<collection>/:id`, then POST `<collection>/:id/<action>` for each action. */
export const resourceRoutes = (
  collection: string,
  patch: unknown,
  actions: ReadonlyArray<readonly [action: string, body?: unknown]> = []
): ReadonlyArray<IdRoute> => [
  idRoute("GET", (id) => `${collection}/${id}`),
  idRoute("PATCH", (id) => `${collection}/${id}`, patch),
  idRoute("DELETE", (id) => `${collection}/${id}`),
  ...actions.map(([action, body]) => idRoute("POST", (id) => `${collection}/${id}/${action}`, body))
]

/** Calls `route` on `id` as `key` (key a by default). */
export const call = (route: IdRoute, id: string, key: string = TestServer.Keys.a) => {
  const body = route.body?.(id)
  return TestServer.request(route.method, route.path(id), body === undefined ? { key } : { key, body })
}

export interface TenantCase {
  readonly route: IdRoute
  readonly tenant: Tenant
  /** `<route> by <tenant>`, for the case's name. */
  readonly label: string
}

/** Every route tried by every other tenant: one table case each. */
export const byOtherTenants = (routes: ReadonlyArray<IdRoute>): ReadonlyArray<TenantCase> =>
  routes.flatMap((route) =>
    otherTenants.map((tenant) => ({ route, tenant, label: `${route.label} by ${tenant.name}` }))
  )

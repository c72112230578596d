/**
 * What a secret refuses (spec 4.9, 7, 8): an unknown or deleted id is 404, a
 * secret of another workspace or organization is 403 and unchanged, a delete
 * while a tool server, HTTP connection or secret context binds it is 409
 * resource_in_use, and a binding needs a secret of the binder's workspace.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { Deleted } from "../../domain/Page.ts"
import { Secret } from "../../domain/Secret.ts"
import { SecretContext } from "../../domain/SecretContext.ts"
import * as Collection from "../support/Collection.ts"
import { byOtherTenants, call, expectDenied, expectInvalid, expectNotFound } from "../support/Refusals.ts"
import { bindHttpConnection, bindToolServer, SecretPage, secretRoutes } from "../support/Secrets.ts"
import * as TestServer from "../support/TestServer.ts"
import { assertNoValue } from "../support/WriteOnly.ts"

const { Keys, request } = TestServer
const { create: createSecret } = Collection.secrets
const { create: createContext } = Collection.secretContexts
const unique = Collection.uniqueName

// The service's default body cap (1 MiB), as for the other secrets suites.
TestServer.suite({ maxBodyBytes: 1_048_576 })("secrets", (it) => {
  it.effect.each(secretRoutes)("an unknown id is 404 secret_not_found: $label", (route) =>
    Effect.gen(function*() {
      yield* expectNotFound(yield* call(route, "sec_0000000000000000000000"), "secret_not_found")
    }))

  it.effect("a deleted secret is 404 secret_not_found and its name is free again", () =>
    Effect.gen(function*() {
      const gone = yield* createSecret({ name: "deleted-soon", value: "v" })
      const deleted = yield* request("DELETE", `/v1/secrets/${gone.id}`)
      assert.strictEqual(deleted.status, 200)
      assert.deepStrictEqual(yield* TestServer.expectOk(deleted, 200, Deleted("secret")), {
        id: gone.id,
        object: "secret",
        deleted: true
      })
      yield* expectNotFound(yield* request("GET", `/v1/secrets/${gone.id}`), "secret_not_found")
      yield* expectNotFound(yield* request("DELETE", `/v1/secrets/${gone.id}`), "secret_not_found")
      yield* expectNotFound(
        yield* request("POST", `/v1/secrets/${gone.id}/rotate`, { body: { value: "v" } }),
        "secret_not_found"
      )
      // The name is free again.
      yield* createSecret({ name: "deleted-soon", value: "v" })
    }))

  it.effect.each(byOtherTenants(secretRoutes))(
    "another workspace or organization gets 403 permission_denied and changes nothing: $label",
    ({ route, tenant }) =>
      Effect.gen(function*() {
        const name = unique("isolated")
        const secret = yield* createSecret({ name, value: "isolated-value", metadata: { owner: "a" } })
        yield* expectDenied(yield* call(route, secret.id, tenant.key))
        const listed = yield* TestServer.expectOk(
          yield* request("GET", "/v1/secrets?limit=100", { key: tenant.key }),
          200,
          SecretPage
        )
        assert.isFalse(listed.data.some((s) => s.id === secret.id))
        const byName = yield* TestServer.expectOk(
          yield* request("GET", `/v1/secrets?name=${name}`, { key: tenant.key }),
          200,
          SecretPage
        )
        assert.deepStrictEqual(byName.data, [])
        const read = yield* TestServer.expectOk(yield* request("GET", `/v1/secrets/${secret.id}`), 200, Secret)
        assert.deepStrictEqual(read, secret)
      })
  )

  it.effect("DELETE while a tool server, HTTP connection or secret context binds it: 409 resource_in_use with details.inUseBy", () =>
    Effect.gen(function*() {
      const secret = yield* createSecret({ name: "bound", value: "bound-value" })
      const ts = yield* bindToolServer("ts1", secret.id)
      const hc = yield* bindHttpConnection("hc1", secret.id)
      const ctx = yield* createContext({
        name: "bound-ctx",
        projections: [{ type: "workspace_env", secretId: secret.id, env: "BOUND" }]
      })

      const expectInUse = (inUseBy: ReadonlyArray<{ readonly object: string; readonly id: string }>) =>
        Effect.gen(function*() {
          const reply = yield* request("DELETE", `/v1/secrets/${secret.id}`)
          const error = yield* TestServer.expectError(reply, 409, "api_error", "resource_in_use")
          assert.deepStrictEqual(error.details, { inUseBy }, reply.text)
          assertNoValue(reply, "bound-value")
        })

      yield* expectInUse([
        { object: "tool_server", id: ts.id },
        { object: "http_connection", id: hc.id },
        { object: "secret_context", id: ctx.id }
      ])
      // Still there.
      assert.strictEqual((yield* request("GET", `/v1/secrets/${secret.id}`)).status, 200)

      // Unbind one at a time.
      const unbound = yield* request("PATCH", `/v1/tool-servers/${ts.id}`, { body: { auth: { type: "none" } } })
      assert.strictEqual(unbound.status, 200, unbound.text)
      yield* expectInUse([{ object: "http_connection", id: hc.id }, { object: "secret_context", id: ctx.id }])
      assert.strictEqual((yield* request("DELETE", `/v1/http-connections/${hc.id}`)).status, 200)
      yield* expectInUse([{ object: "secret_context", id: ctx.id }])
      const emptied = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secret-contexts/${ctx.id}`, { body: { projections: [] } }),
        200,
        SecretContext
      )
      assert.deepStrictEqual(emptied.projections, [])

      const deleted = yield* request("DELETE", `/v1/secrets/${secret.id}`)
      assert.deepStrictEqual(yield* TestServer.expectOk(deleted, 200, Deleted("secret")), {
        id: secret.id,
        object: "secret",
        deleted: true
      })
      yield* expectNotFound(yield* request("GET", `/v1/secrets/${secret.id}`), "secret_not_found")
    }))

  it.effect("references from another workspace do not block a delete; bindings need a secret of the same workspace", () =>
    Effect.gen(function*() {
      const secret = yield* createSecret({ name: "cross-bind", value: "v" })
      // Key b (same organization, other workspace) cannot bind key a's secret.
      const ts = yield* request("POST", "/v1/tool-servers", {
        key: Keys.b,
        body: {
          name: "ts-cross",
          transport: "http",
          url: "https://93.184.215.14/mcp",
          auth: { type: "bearer", secretId: secret.id }
        }
      })
      yield* expectInvalid(ts, "auth.secretId")
      const ctx = yield* request("POST", "/v1/secret-contexts", {
        key: Keys.b,
        body: { name: "ctx-cross", projections: [{ type: "workspace_env", secretId: secret.id, env: "X" }] }
      })
      yield* expectInvalid(ctx, "projections[0].secretId")
      assert.strictEqual((yield* request("DELETE", `/v1/secrets/${secret.id}`)).status, 200)
    }))
})

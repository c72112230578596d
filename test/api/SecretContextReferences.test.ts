/**
 * Secret contexts as agents use them: agents name them in
 * workspace.secretContexts (contexts of their own workspace only), and a
 * context is not deleted while an agent does; an unknown id is 404 and another
 * workspace's context 403, unchanged.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { Deleted } from "../../domain/Page.ts"
import { SecretContext } from "../../domain/SecretContext.ts"
import * as Collection from "../support/Collection.ts"
import { byOtherTenants, call, expectDenied, expectInvalid, expectNotFound } from "../support/Refusals.ts"
import { ContextPage, contextRoutes } from "../support/Secrets.ts"
import * as TestServer from "../support/TestServer.ts"

const { Keys, request } = TestServer
const { create: createSecret } = Collection.secrets
const { create: createContext } = Collection.secretContexts
const unique = Collection.uniqueName

TestServer.suite()("secret contexts", (it) => {
  it.effect("agents reference contexts in workspace.secretContexts; delete is refused while they do", () =>
    Effect.gen(function*() {
      const secret = yield* createSecret({ name: "agent-ctx-secret", value: "v" })
      const ctx = yield* createContext({
        name: "agent-ctx",
        projections: [{ type: "workspace_env", secretId: secret.id, env: "TOKEN" }]
      })
      const other = yield* createContext({ name: "agent-ctx-other", projections: [] })
      const staging = yield* createContext({ name: "agent-ctx-staging", projections: [] }, Keys.b)

      // Unknown and foreign contexts are refused.
      yield* expectInvalid(
        yield* request("POST", "/v1/agents", {
          body: { workspace: { type: "managed", secretContexts: ["sctx_0000000000000000000000"] } }
        }),
        "workspace.secretContexts[0]"
      )
      yield* expectInvalid(
        yield* request("POST", "/v1/agents", {
          body: { workspace: { type: "managed", secretContexts: [ctx.id, staging.id] } }
        }),
        "workspace.secretContexts[1]"
      )

      const agent1 = yield* Collection.agents.create({ workspace: { type: "managed", secretContexts: [ctx.id] } })
      const agent2 = yield* Collection.agents.create({
        workspace: { type: "managed", secretContexts: [other.id, ctx.id] }
      })
      yield* expectInvalid(
        yield* request("PATCH", `/v1/agents/${agent1.id}`, {
          body: { workspace: { type: "managed", secretContexts: [ctx.id, "sctx_0000000000000000000000"] } }
        }),
        "workspace.secretContexts[1]"
      )

      const expectInUse = (agentIds: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const reply = yield* request("DELETE", `/v1/secret-contexts/${ctx.id}`)
          const error = yield* TestServer.expectError(reply, 409, "api_error", "resource_in_use")
          assert.deepStrictEqual(error.details, { inUseByAgentIds: [...agentIds].sort() }, reply.text)
        })
      yield* expectInUse([agent1.id, agent2.id])

      // The secret is in turn bound by the context.
      const secretInUse = yield* TestServer.expectError(
        yield* request("DELETE", `/v1/secrets/${secret.id}`),
        409,
        "api_error",
        "resource_in_use"
      )
      assert.deepStrictEqual(secretInUse.details, { inUseBy: [{ object: "secret_context", id: ctx.id }] })

      assert.strictEqual(
        (yield* request("PATCH", `/v1/agents/${agent1.id}`, { body: { workspace: null } })).status,
        200
      )
      yield* expectInUse([agent2.id])
      const repointed = yield* request("PATCH", `/v1/agents/${agent2.id}`, {
        body: { workspace: { type: "managed", secretContexts: [other.id] } }
      })
      assert.strictEqual(repointed.status, 200, repointed.text)

      const deleted = yield* request("DELETE", `/v1/secret-contexts/${ctx.id}`)
      assert.deepStrictEqual(yield* TestServer.expectOk(deleted, 200, Deleted("secret_context")), {
        id: ctx.id,
        object: "secret_context",
        deleted: true
      })
      yield* expectNotFound(yield* request("GET", `/v1/secret-contexts/${ctx.id}`), "secret_context_not_found")
      // With the context gone, the secret is free.
      assert.strictEqual((yield* request("DELETE", `/v1/secrets/${secret.id}`)).status, 200)
      // Deleting the other context is refused while agent2 lists it; deleting agent2 frees it.
      yield* TestServer.expectError(
        yield* request("DELETE", `/v1/secret-contexts/${other.id}`),
        409,
        "api_error",
        "resource_in_use"
      )
      assert.strictEqual((yield* request("DELETE", `/v1/agents/${agent2.id}`)).status, 200)
      assert.strictEqual((yield* request("DELETE", `/v1/secret-contexts/${other.id}`)).status, 200)
    }))

  it.effect.each(contextRoutes)(
    "an unknown id is 404 secret_context_not_found: $label",
    (route) =>
      Effect.gen(function*() {
        yield* expectNotFound(yield* call(route, "sctx_0000000000000000000000"), "secret_context_not_found")
      })
  )

  it.effect.each(byOtherTenants(contextRoutes))(
    "another workspace's context is 403 permission_denied and changes nothing: $label",
    ({ route, tenant }) =>
      Effect.gen(function*() {
        const ctx = yield* createContext({ name: unique("ctx-isolated"), projections: [], metadata: { owner: "a" } })
        yield* expectDenied(yield* call(route, ctx.id, tenant.key))
        const listed = yield* TestServer.expectOk(
          yield* request("GET", "/v1/secret-contexts?limit=100", { key: tenant.key }),
          200,
          ContextPage
        )
        assert.isFalse(listed.data.some((c) => c.id === ctx.id))
        assert.deepStrictEqual(
          yield* TestServer.expectOk(yield* request("GET", `/v1/secret-contexts/${ctx.id}`), 200, SecretContext),
          ctx
        )
      })
  )
})

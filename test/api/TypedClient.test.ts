/**
 * The contract drives a client unchanged: Effect's `HttpApiClient.make(Api)`
 * against the whole service on a real listener and PostgreSQL. The happy path
 * of an agent (create, get, list, a thread for it, patch, delete) comes back
 * decoded with the contract's own schemas, and a refusal decodes into the
 * envelope class its endpoint declares for that status (404 `ApiNotFound`,
 * 403 `ApiForbidden`), carrying the request id.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { bearer } from "../../client/ServiceClient.ts"
import { Api } from "../../http/Api.ts"
import { ApiForbidden, ApiNotFound } from "../../http/ErrorEnvelope.ts"
import * as TestServer from "../support/TestServer.ts"

/** The typed client of the service under test, as the holder of `key`. */
const typedClient = (key: string) =>
  Effect.flatMap(TestServer.TestApi, (api) =>
    HttpApiClient.make(Api, { baseUrl: api.url }).pipe(
      Effect.provide([bearer(key), FetchHttpClient.layer])
    ))

TestServer.suite()("the typed HttpApiClient", (it) => {
  it.effect("an agent's happy path: create, get, list, a thread, patch, delete, each body decoded", () =>
    Effect.gen(function*() {
      const client = yield* typedClient(TestServer.Keys.a)

      const agent = yield* client.agents.create({
        payload: { context: "You are concise.", metadata: { team: "docs" } },
        headers: {}
      })
      assert.match(agent.id, /^agent_/)
      assert.strictEqual(agent.object, "agent")
      assert.deepStrictEqual(agent.context.map((block) => block.content), ["You are concise."])
      assert.deepStrictEqual(agent.metadata, { team: "docs" })

      assert.deepStrictEqual(yield* client.agents.get({ params: { id: agent.id } }), agent)

      const page = yield* client.agents.list({ query: { limit: 100 } })
      assert.strictEqual(page.object, "list")
      assert.deepStrictEqual(page.data.find((a) => a.id === agent.id), agent)

      const thread = yield* client.threads.create({ payload: { agentId: agent.id }, headers: {} })
      assert.match(thread.id, /^thread_/)
      assert.strictEqual(thread.agentId, agent.id)
      assert.isTrue(thread.created)

      const patched = yield* client.agents.update({
        params: { id: agent.id },
        payload: { metadata: { team: "support", tier: "gold" } }
      })
      assert.deepStrictEqual(patched.metadata, { team: "support", tier: "gold" })
      assert.deepStrictEqual(patched.context, agent.context)

      assert.deepStrictEqual(yield* client.agents.delete({ params: { id: agent.id } }), {
        id: agent.id,
        object: "agent",
        deleted: true
      })
    }))

  it.effect("refusals decode into the envelope class of their status", () =>
    Effect.gen(function*() {
      const client = yield* typedClient(TestServer.Keys.a)
      const agent = yield* client.agents.create({ payload: { context: "x" }, headers: {} })

      // Another organization's key: the agent exists but is not theirs.
      const stranger = yield* typedClient(TestServer.Keys.c)
      const forbidden = yield* Effect.flip(stranger.agents.get({ params: { id: agent.id } }))
      assert.instanceOf(forbidden, ApiForbidden)
      assert.strictEqual(forbidden.error.type, "permission_error")
      assert.strictEqual(forbidden.error.code, "permission_denied")

      yield* client.agents.delete({ params: { id: agent.id } })
      const missing = yield* Effect.flip(client.agents.get({ params: { id: agent.id } }))
      assert.instanceOf(missing, ApiNotFound)
      assert.deepStrictEqual(
        { type: missing.error.type, code: missing.error.code, message: missing.error.message },
        { type: "not_found", code: "agent_not_found", message: `No agent with id '${agent.id}'.` }
      )
      assert.match(missing.error.request_id, TestServer.requestIdShape)
    }))
})

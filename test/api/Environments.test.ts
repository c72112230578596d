/**
 * Environments (issue 31): the resource and its token. The token is answered
 * by create and rotate-token only, never by get or list; another workspace's
 * environment is 403, an unknown one 404 `environment_not_found`; an agent's
 * `workspace.environmentId` must name one of the caller's workspace (400, 403
 * across workspaces) and keeps it from being deleted (409 `resource_in_use`);
 * a runner's poll makes it `connected` with the runner's host name and
 * version, and a rotation ends the old token's poll with 401.
 */
import { assert } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { Environment, EnvironmentWithToken } from "../../domain/Environment.ts"
import { Page } from "../../domain/Page.ts"
import * as Collection from "../support/Collection.ts"
import * as TestServer from "../support/TestServer.ts"

const { expectError, expectOk, Keys, request } = TestServer

const create = (body: unknown, key: string = Keys.a) =>
  Effect.flatMap(request("POST", "/v1/environments", { key, body }), (r) => expectOk(r, 200, EnvironmentWithToken))

const poll = (token: string, runnerId: string) =>
  request("POST", "/v1/environments/connect", {
    key: null,
    headers: { authorization: `Bearer ${token}` },
    body: { runnerId, hostName: "build-box.local", version: "1.2.3" }
  })

const remoteAgent = (environmentId: string, path = "/v1/agents", key: string = Keys.a) =>
  request("POST", path, {
    key,
    body: { band: "core", workspace: { type: "remote", environmentId, shell: true } }
  })

TestServer.suite()("environments", (it) => {
  it.effect("create answers the token once; get, list and update never show it", () =>
    Effect.gen(function*() {
      const created = yield* create({ name: "build-box", metadata: { team: "platform" } })
      assert.match(created.id, /^env_[0-9A-Za-z]{22}$/)
      assert.match(created.token, /^envtok_[0-9A-Za-z]{43}$/)
      assert.deepStrictEqual(
        { object: created.object, name: created.name, status: created.status, runners: created.runners },
        { object: "environment", name: "build-box", status: "disconnected", runners: [] }
      )
      const got = yield* request("GET", `/v1/environments/${created.id}`)
      const read = yield* expectOk(got, 200, Environment)
      assert.isFalse(got.text.includes(created.token))
      assert.isFalse("token" in read)
      const listed = yield* request("GET", "/v1/environments?limit=100")
      assert.isFalse(listed.text.includes(created.token))
      const page = yield* expectOk(listed, 200, Page(Environment))
      assert.isTrue(page.data.some((e) => e.id === created.id))
      const updated = yield* expectOk(
        yield* request("PATCH", `/v1/environments/${created.id}`, {
          body: { name: "build-box-2", metadata: { team: null, os: "linux" } }
        }),
        200,
        Environment
      )
      assert.deepStrictEqual([updated.name, updated.metadata, updated.configVersion], [
        "build-box-2",
        { os: "linux" },
        2
      ])
      assert.isFalse(JSON.stringify(updated).includes(created.token))
    }))

  it.effect("another workspace's environment is 403, an unknown one 404 environment_not_found", () =>
    Effect.gen(function*() {
      const created = yield* create({ name: "private" })
      for (const key of [Keys.b, Keys.c]) {
        yield* expectError(
          yield* request("GET", `/v1/environments/${created.id}`, { key }),
          403,
          "permission_error",
          "permission_denied"
        )
        yield* expectError(
          yield* request("POST", `/v1/environments/${created.id}/rotate-token`, { key }),
          403,
          "permission_error",
          "permission_denied"
        )
      }
      const missing = "env_0000000000000000000000"
      for (const [method, path] of [["GET", ""], ["PATCH", ""], ["DELETE", ""], ["POST", "/rotate-token"]] as const) {
        yield* expectError(
          yield* request(method, `/v1/environments/${missing}${path}`, method === "PATCH" ? { body: {} } : {}),
          404,
          "not_found",
          "environment_not_found"
        )
      }
    }))

  it.effect("workspace.environmentId: 400 unless it exists, 403 across workspaces; an agent's reference blocks delete", () =>
    Effect.gen(function*() {
      const own = yield* create({ name: "mine" })
      const theirs = yield* create({ name: "theirs" }, Keys.b)
      for (const path of ["/v1/agents", "/v1/agents/validate"]) {
        const unknown = yield* expectError(
          yield* remoteAgent("env_0000000000000000000000", path),
          400,
          "invalid_request_error",
          "invalid_request_error"
        )
        assert.strictEqual(unknown.details?.["field"], "workspace.environmentId")
        yield* expectError(yield* remoteAgent(theirs.id, path), 403, "permission_error", "permission_denied")
      }
      assert.strictEqual((yield* remoteAgent(own.id, "/v1/agents/validate")).status, 200)
      const agent = yield* Collection.agents.create({
        band: "core",
        workspace: { type: "remote", environmentId: own.id }
      })
      const refused = yield* expectError(
        yield* request("DELETE", `/v1/environments/${own.id}`),
        409,
        "api_error",
        "resource_in_use"
      )
      assert.deepStrictEqual(refused.details, { inUseByAgentIds: [agent.id] })
      assert.strictEqual((yield* request("DELETE", `/v1/agents/${agent.id}`)).status, 200)
      const deleted = yield* request("DELETE", `/v1/environments/${own.id}`)
      assert.deepStrictEqual(deleted.json, { id: own.id, object: "environment", deleted: true })
    }))

  it.effect("a runner's poll connects it; rotating the token ends the old token's poll with 401", () =>
    Effect.gen(function*() {
      const env = yield* create({ name: "rotating" })
      // A new runner's first poll is answered at once (nothing to do yet): it knows it is connected.
      const first = yield* poll(env.token, "runner-aaaaaaaa")
      assert.deepStrictEqual([first.status, first.json], [200, { call: null }])
      const connected = yield* expectOk(yield* request("GET", `/v1/environments/${env.id}`), 200, Environment)
      assert.strictEqual(connected.status, "connected")
      // Its next poll waits for a call.
      const polling = yield* Effect.forkChild(poll(env.token, "runner-aaaaaaaa"))
      assert.deepStrictEqual(connected.runners.map((r) => [r.hostName, r.version]), [["build-box.local", "1.2.3"]])
      const rotated = yield* expectOk(
        yield* request("POST", `/v1/environments/${env.id}/rotate-token`),
        200,
        EnvironmentWithToken
      )
      assert.notStrictEqual(rotated.token, env.token)
      yield* expectError(yield* Fiber.join(polling), 401, "authentication_error", "invalid_api_key")
      yield* expectError(yield* poll(env.token, "runner-aaaaaaaa"), 401, "authentication_error", "invalid_api_key")
      const after = yield* expectOk(yield* request("GET", `/v1/environments/${env.id}`), 200, Environment)
      assert.strictEqual(after.status, "disconnected")
      // The new token works.
      assert.strictEqual((yield* poll(rotated.token, "runner-bbbbbbbb")).status, 200)
      const fresh = yield* Effect.forkChild(poll(rotated.token, "runner-bbbbbbbb"))
      const reconnected = yield* expectOk(yield* request("GET", `/v1/environments/${env.id}`), 200, Environment)
      assert.deepStrictEqual([reconnected.status, reconnected.runners.length], ["connected", 1])
      // Deleting the environment ends its runners' polls too.
      assert.strictEqual((yield* request("DELETE", `/v1/environments/${env.id}`)).status, 200)
      yield* expectError(yield* Fiber.join(fresh), 401, "authentication_error", "invalid_api_key")
    }))
})
void Schema

/**
 * API keys through the API (spec 5.1: a revoked key is 401 invalid_api_key;
 * spec 7: permission_denied 403): an admin key creates a key (its secret in
 * that answer only), lists its organization's keys as a page and revokes one,
 * which is refused at once; a member key is 403 on every route; another
 * organization's key is 403, an unknown id 404 `api_key_not_found`; a retried
 * create with its Idempotency-Key answers the same key, kept sealed.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { ApiKey, ApiKeyCreated } from "../../domain/ApiKey.ts"
import { Page } from "../../domain/Page.ts"
import * as Collection from "../support/Collection.ts"
import { expectDenied, expectInvalid, expectNotFound } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

const { Keys, expectOk, expectError, request } = TestServer

/** An admin key of another organization (Keys.c's). */
const globexAdmin = "sk_test_globex_admin"

const Harness = TestServer.layerWithSql({
  seedKeys: [
    ...TestServer.seedKeys,
    { key: Redacted.make(globexAdmin), organizationId: "org_globex", workspaceId: "prod", role: "admin" }
  ]
})

const apiKeys = Collection.collection("/v1/api-keys", ApiKey)
const KeyPage = Page(ApiKey)

const create = (body: unknown, key: string = Keys.admin, headers: Record<string, string> = {}) =>
  request("POST", "/v1/api-keys", { body, key, headers })
const created = (body: unknown, key: string = Keys.admin) =>
  Effect.flatMap(create(body, key), (reply) => expectOk(reply, 200, ApiKeyCreated))
const revoke = (id: string, key: string = Keys.admin, headers: Record<string, string> = {}) =>
  request("POST", `/v1/api-keys/${id}/revoke`, { key, headers })
const listAll = (key: string = Keys.admin) => Effect.flatMap(apiKeys.ids(key), (ids) => Effect.succeed(new Set(ids)))

/** The key as listed: what a create answered, without the secret, with `changes`. */
const listedOf = ({ key: _secret, ...listed }: ApiKeyCreated, changes: Partial<ApiKey> = {}): ApiKey => ({
  ...listed,
  ...changes
})

/** Whether `key` is accepted: 200 on a route every key may call, else the 401. */
const accepted = (key: string) =>
  Effect.gen(function*() {
    const reply = yield* request("GET", "/v1/agents", { key })
    if (reply.status === 200) return true
    yield* expectError(reply, 401, "authentication_error", "invalid_api_key")
    return false
  })

layer(Harness, { timeout: TestServer.setupTimeout })("API keys", (it) => {
  it.effect("an admin creates a key: every field, the secret once, and the key works in its workspace", () =>
    Effect.gen(function*() {
      const at = yield* TestServer.nowIso
      const key = yield* created({ name: "ci-deploys", workspace: "staging" })
      assert.match(key.id, /^key_[0-9A-Za-z]{22}$/)
      assert.match(key.key, /^sk_[0-9A-Za-z]{43}$/)
      assert.deepStrictEqual({ ...key, id: "", key: "" }, {
        id: "",
        object: "api_key",
        name: "ci-deploys",
        prefix: key.key.slice(0, 7),
        workspace: "staging",
        role: "member",
        createdAt: at,
        lastUsedAt: null,
        revokedAt: null,
        key: ""
      })
      // The new key is of org_acme / staging: key b's workspace.
      const agent = yield* Collection.agents.create({ context: "made by the new key" }, key.key)
      yield* Collection.agents.read(agent.id, Keys.b)
      yield* expectDenied(yield* Collection.agents.get(agent.id, Keys.a))

      // Listed without the secret, used now.
      const listed = yield* expectOk(yield* request("GET", "/v1/api-keys?limit=100", { key: Keys.admin }), 200, KeyPage)
      const entry = listed.data.find((k) => k.id === key.id)
      assert.deepStrictEqual(entry, listedOf(key, { lastUsedAt: at }))
      const raw = yield* request("GET", "/v1/api-keys?limit=100", { key: Keys.admin })
      assert.notInclude(raw.text, key.key)
      assert.notInclude(raw.text, key.key.slice(0, 12))
      assert.notProperty((raw.json as { data: Array<object> }).data[0], "key")

      // The default workspace is the admin's own; an admin may create admins.
      const admin = yield* created({ name: "second admin", role: "admin" })
      assert.deepStrictEqual([admin.workspace, admin.role], ["prod", "admin"])
      yield* expectOk(yield* request("GET", "/v1/api-keys", { key: admin.key }), 200, KeyPage)
    }))

  it.effect("the list is a page of the organization's keys, every workspace's, newest first", () =>
    Effect.gen(function*() {
      // Later than every key made so far (keys made at one instant are ordered by id).
      yield* TestClock.adjust("1 second")
      const mine = yield* created({ name: "paged" })
      const first = yield* expectOk(yield* request("GET", "/v1/api-keys?limit=1", { key: Keys.admin }), 200, KeyPage)
      assert.deepStrictEqual(Object.keys(first).sort(), ["data", "hasMore", "limit", "nextCursor", "object"])
      assert.deepStrictEqual([first.object, first.limit, first.hasMore, first.data.length], ["list", 1, true, 1])
      assert.strictEqual(first.data[0]?.id, mine.id)
      assert.isString(first.nextCursor)

      const all = yield* apiKeys.ids(Keys.admin)
      assert.strictEqual(new Set(all).size, all.length, "no key twice across pages")
      const listed = yield* expectOk(yield* request("GET", "/v1/api-keys?limit=100", { key: Keys.admin }), 200, KeyPage)
      // The seeds of org_acme: keys a, b and admin (two workspaces); never org_globex's.
      const seeds = listed.data.filter((k) => k.name === "SVC_API_KEYS")
      assert.deepStrictEqual(seeds.map((k) => [k.prefix, k.workspace, k.role]).sort(), [
        ["sk_t", "prod", "admin"],
        ["sk_t", "prod", "member"],
        ["sk_te", "staging", "member"]
      ])
      const order = listed.data.map((k) => `${k.createdAt} ${k.id}`)
      assert.deepStrictEqual(order, [...order].sort().reverse())
      const theirs = yield* listAll(globexAdmin)
      for (const id of all) assert.isFalse(theirs.has(id), `org_globex lists org_acme's ${id}`)
      yield* expectInvalid(yield* request("GET", "/v1/api-keys?limit=0", { key: Keys.admin }), "limit")
    }))

  it.effect("a revoked key is 401 invalid_api_key at once, even just used; revoking again answers it unchanged", () =>
    Effect.gen(function*() {
      const key = yield* created({ name: "short-lived" })
      assert.isTrue(yield* accepted(key.key))
      const reply = yield* revoke(key.id)
      const revoked = yield* expectOk(reply, 200, ApiKey)
      const at = yield* TestServer.nowIso
      assert.deepStrictEqual(revoked, listedOf(key, { lastUsedAt: at, revokedAt: at }))
      assert.notInclude(reply.text, key.key)
      assert.isFalse(yield* accepted(key.key))
      const again = yield* expectOk(yield* revoke(key.id), 200, ApiKey)
      assert.deepStrictEqual(again, revoked)
      const listed = yield* expectOk(yield* request("GET", "/v1/api-keys?limit=100", { key: Keys.admin }), 200, KeyPage)
      assert.deepStrictEqual(listed.data.find((k) => k.id === key.id), revoked)

      // An admin may revoke itself: its next request is refused.
      const admin = yield* created({ name: "self-revoking", role: "admin" })
      yield* expectOk(yield* revoke(admin.id, admin.key), 200, ApiKey)
      yield* expectError(
        yield* request("GET", "/v1/api-keys", { key: admin.key }),
        401,
        "authentication_error",
        "invalid_api_key"
      )
    }))

  it.effect("a member key is 403 permission_denied on every key route, and changes nothing", () =>
    Effect.gen(function*() {
      const target = yield* created({ name: "target" })
      const before = yield* listAll()
      for (const member of [Keys.a, Keys.b, Keys.c]) {
        yield* expectDenied(yield* create({ name: "by a member" }, member))
        yield* expectDenied(yield* request("GET", "/v1/api-keys", { key: member }))
        yield* expectDenied(yield* revoke(target.id, member))
      }
      assert.deepStrictEqual(yield* listAll(), before)
      assert.isTrue(yield* accepted(target.key))
      yield* expectError(
        yield* request("GET", "/v1/api-keys", { key: null }),
        401,
        "authentication_error",
        "invalid_api_key"
      )
    }))

  it.effect("another organization's key is 403 permission_denied; an unknown or malformed id 404 api_key_not_found", () =>
    Effect.gen(function*() {
      const theirs = yield* created({ name: "globex key" }, globexAdmin)
      yield* expectDenied(yield* revoke(theirs.id, Keys.admin))
      assert.isTrue(yield* accepted(theirs.key))
      const missing = yield* expectNotFound(yield* revoke("key_0000000000000000000000"), "api_key_not_found")
      assert.strictEqual(missing.message, "No api key with id 'key_0000000000000000000000'.")
      yield* expectNotFound(yield* revoke("agent_0000000000000000000000"), "api_key_not_found")
      yield* expectNotFound(yield* revoke("key_%00"), "api_key_not_found")
    }))

  it.effect("a create is refused naming the field: no name, a bad workspace or role, an unknown field", () =>
    Effect.gen(function*() {
      const before = yield* listAll()
      yield* expectInvalid(yield* create({}), "name")
      yield* expectInvalid(yield* create({ name: "" }), "name")
      yield* expectInvalid(yield* create({ name: "x".repeat(129) }), "name")
      yield* expectInvalid(yield* create({ name: "x", workspace: "pro d" }), "workspace")
      yield* expectInvalid(yield* create({ name: "x", role: "owner" }), "role")
      yield* expectInvalid(yield* create({ name: "x", organization: "org_globex" }), "organization")
      assert.deepStrictEqual(yield* listAll(), before)
    }))

  it.effect("Idempotency-Key: a retried create answers the same key, never stored in the clear; a revoke replays", () =>
    Effect.gen(function*() {
      const headers = { "idempotency-key": "create-ci-key" }
      const first = yield* expectOk(yield* create({ name: "idempotent" }, Keys.admin, headers), 200, ApiKeyCreated)
      const retry = yield* expectOk(yield* create({ name: "idempotent" }, Keys.admin, headers), 200, ApiKeyCreated)
      assert.deepStrictEqual(retry, first)
      const named = (yield* expectOk(
        yield* request("GET", "/v1/api-keys?limit=100", { key: Keys.admin }),
        200,
        KeyPage
      )).data.filter((k) => k.name === "idempotent")
      assert.strictEqual(named.length, 1, "one key made")
      yield* expectError(
        yield* create({ name: "another body" }, Keys.admin, headers),
        409,
        "api_error",
        "idempotency_key_conflict"
      )
      // The record that answers the retry holds the secret sealed, not the key itself.
      const sql = yield* PgClient.PgClient
      const records = yield* sql`SELECT response::text AS response FROM idempotency_keys WHERE key = 'create-ci-key'`
      assert.strictEqual(records.length, 1)
      assert.notInclude(String(records[0]?.["response"]), first.key)
      assert.notInclude(String(records[0]?.["response"]), first.key.slice(3, 20))

      const revokeHeaders = { "idempotency-key": "revoke-ci-key" }
      const revoked = yield* expectOk(yield* revoke(first.id, Keys.admin, revokeHeaders), 200, ApiKey)
      assert.deepStrictEqual(yield* expectOk(yield* revoke(first.id, Keys.admin, revokeHeaders), 200, ApiKey), revoked)
      assert.isFalse(yield* accepted(first.key))
    }))
})

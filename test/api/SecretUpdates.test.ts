/**
 * Secrets' names and updates (spec 4.9): names unique per organization, also
 * under concurrent creates and renames; PATCH (metadata merges without a
 * version bump, name and contentType bump it) and rotate (a new value, a new
 * configVersion, neither value in the answer).
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Secret } from "../../domain/Secret.ts"
import * as Collection from "../support/Collection.ts"
import { expectInvalid } from "../support/Refusals.ts"
import { SecretPage } from "../support/Secrets.ts"
import * as TestServer from "../support/TestServer.ts"
import { assertNoValue } from "../support/WriteOnly.ts"

const { Keys, nowIso, request } = TestServer
const { create: createSecret } = Collection.secrets

// The service's default body cap (1 MiB), as for the other secrets suites.
TestServer.suite({ maxBodyBytes: 1_048_576 })("secrets", (it) => {
  it.effect("names are unique per organization: 409 name_conflict on create and rename", () =>
    Effect.gen(function*() {
      const first = yield* createSecret({ name: "unique-a", value: "1" })
      const conflict = yield* TestServer.expectError(
        yield* request("POST", "/v1/secrets", { body: { name: "unique-a", value: "2" } }),
        409,
        "api_error",
        "name_conflict"
      )
      assert.deepStrictEqual(conflict.details, { field: "name" })
      // Another workspace of the same organization conflicts too.
      const sameOrg = yield* TestServer.expectError(
        yield* request("POST", "/v1/secrets", { key: Keys.b, body: { name: "unique-a", value: "3" } }),
        409,
        "api_error",
        "name_conflict"
      )
      assert.deepStrictEqual(sameOrg.details, { field: "name" })
      // Another organization may use the name.
      const otherOrg = yield* createSecret({ name: "unique-a", value: "4" }, Keys.c)
      assert.notStrictEqual(otherOrg.id, first.id)
      // Names are case-sensitive and exact.
      yield* createSecret({ name: "Unique-A", value: "5" })

      // Rename into a taken name: 409, and nothing changes.
      const second = yield* createSecret({ name: "unique-b", value: "6" })
      const rename = yield* TestServer.expectError(
        yield* request("PATCH", `/v1/secrets/${second.id}`, { body: { name: "unique-a" } }),
        409,
        "api_error",
        "name_conflict"
      )
      assert.deepStrictEqual(rename.details, { field: "name" })
      const staging = yield* createSecret({ name: "unique-staging", value: "7" }, Keys.b)
      yield* TestServer.expectError(
        yield* request("PATCH", `/v1/secrets/${staging.id}`, { key: Keys.b, body: { name: "unique-b" } }),
        409,
        "api_error",
        "name_conflict"
      )
      const after = yield* TestServer.expectOk(yield* request("GET", `/v1/secrets/${second.id}`), 200, Secret)
      assert.deepStrictEqual(after, second)
      // Renaming to its own name is not a conflict (and not a change).
      const self = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secrets/${second.id}`, { body: { name: "unique-b" } }),
        200,
        Secret
      )
      assert.strictEqual(self.configVersion, 1)
      // A freed name can be reused.
      assert.strictEqual((yield* request("DELETE", `/v1/secrets/${first.id}`)).status, 200)
      const renamed = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secrets/${second.id}`, { body: { name: "unique-a" } }),
        200,
        Secret
      )
      assert.strictEqual(renamed.name, "unique-a")
      assert.strictEqual(renamed.configVersion, 2)
    }))

  it.effect("concurrent creates of one name: exactly one wins, the others get 409 name_conflict", () =>
    Effect.gen(function*() {
      const creates = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) => request("POST", "/v1/secrets", { body: { name: "race-create", value: `v${i}` } }),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        creates.map((r) => r.status).sort(),
        [200, 409, 409, 409, 409, 409, 409, 409],
        creates.map((r) => r.text).join("\n")
      )
      for (const reply of creates.filter((r) => r.status !== 200)) {
        yield* TestServer.expectError(reply, 409, "api_error", "name_conflict")
      }
      const listed = yield* TestServer.expectOk(yield* request("GET", "/v1/secrets?name=race-create"), 200, SecretPage)
      assert.strictEqual(listed.data.length, 1)
    }))

  it.effect("concurrent renames to one name: exactly one wins, the others get 409 name_conflict", () =>
    Effect.gen(function*() {
      const others = yield* Effect.forEach(
        Array.from({ length: 6 }, (_, i) => i),
        (i) => createSecret({ name: `race-rename-${i}`, value: "v" })
      )
      const renames = yield* Effect.forEach(
        others,
        (secret) => request("PATCH", `/v1/secrets/${secret.id}`, { body: { name: "race-renamed" } }),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        renames.map((r) => r.status).sort(),
        [200, 409, 409, 409, 409, 409],
        renames.map((r) => r.text).join("\n")
      )
      const renamed = yield* TestServer.expectOk(
        yield* request("GET", "/v1/secrets?name=race-renamed"),
        200,
        SecretPage
      )
      assert.strictEqual(renamed.data.length, 1)
    }))

  it.effect("PATCH: metadata merges (null deletes) without a version bump; name and contentType bump configVersion", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 second")
      const created = yield* createSecret({ name: "patch-me", value: "v", metadata: { a: "1", b: "2" } })
      yield* TestClock.adjust("1 second")
      const t1 = yield* nowIso
      const reply = yield* request("PATCH", `/v1/secrets/${created.id}`, { body: { metadata: { b: null, c: "3" } } })
      const metaOnly = yield* TestServer.expectOk(reply, 200, Secret)
      assert.deepStrictEqual(reply.json, { ...created, metadata: { a: "1", c: "3" }, updatedAt: t1 })
      assert.strictEqual(metaOnly.configVersion, 1)

      const empty = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secrets/${created.id}`, { body: {} }),
        200,
        Secret
      )
      assert.strictEqual(empty.configVersion, 1)
      assert.deepStrictEqual(empty.metadata, { a: "1", c: "3" })

      yield* TestClock.adjust("1 second")
      const t2 = yield* nowIso
      const contentType = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secrets/${created.id}`, { body: { contentType: "text/plain" } }),
        200,
        Secret
      )
      assert.deepStrictEqual(contentType, { ...metaOnly, contentType: "text/plain", configVersion: 2, updatedAt: t2 })
      // The same contentType again is not a change.
      const same = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secrets/${created.id}`, { body: { contentType: "text/plain" } }),
        200,
        Secret
      )
      assert.strictEqual(same.configVersion, 2)
      const cleared = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secrets/${created.id}`, { body: { contentType: null } }),
        200,
        Secret
      )
      assert.isNull(cleared.contentType)
      assert.strictEqual(cleared.configVersion, 3)

      const renamed = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secrets/${created.id}`, {
          body: { name: "patch-me-renamed", metadata: { a: null } }
        }),
        200,
        Secret
      )
      assert.strictEqual(renamed.name, "patch-me-renamed")
      assert.deepStrictEqual(renamed.metadata, { c: "3" })
      assert.strictEqual(renamed.configVersion, 4)
      assert.strictEqual(renamed.createdAt, created.createdAt)
      assert.strictEqual(renamed.source, "svc")

      const read = yield* TestServer.expectOk(yield* request("GET", `/v1/secrets/${created.id}`), 200, Secret)
      assert.deepStrictEqual(read, renamed)

      // Invalid patches.
      yield* expectInvalid(yield* request("PATCH", `/v1/secrets/${created.id}`, { body: { name: "" } }), "name")
      yield* expectInvalid(
        yield* request("PATCH", `/v1/secrets/${created.id}`, { body: { metadata: { k: 1 } } }),
        "metadata.k"
      )
      const unchanged = yield* TestServer.expectOk(yield* request("GET", `/v1/secrets/${created.id}`), 200, Secret)
      assert.deepStrictEqual(unchanged, renamed)
    }))

  it.effect("POST /v1/secrets/:id/rotate replaces the value and increments configVersion", () =>
    Effect.gen(function*() {
      const created = yield* createSecret({ name: "rotate-me", value: "old-value", metadata: { k: "v" } })
      yield* TestClock.adjust("1 second")
      const now = yield* nowIso
      const reply = yield* request("POST", `/v1/secrets/${created.id}/rotate`, { body: { value: "new-value" } })
      const rotated = yield* TestServer.expectOk(reply, 200, Secret)
      assert.deepStrictEqual(reply.json, { ...created, configVersion: 2, updatedAt: now })
      assertNoValue(reply, "old-value", "new-value")
      const again = yield* TestServer.expectOk(
        yield* request("POST", `/v1/secrets/${created.id}/rotate`, { body: { value: "new-value" } }),
        200,
        Secret
      )
      assert.strictEqual(again.configVersion, 3)
      assert.deepStrictEqual(
        yield* TestServer.expectOk(yield* request("GET", `/v1/secrets/${created.id}`), 200, Secret),
        again
      )
      assert.strictEqual(rotated.name, "rotate-me")
      yield* expectInvalid(yield* request("POST", `/v1/secrets/${created.id}/rotate`, { body: {} }), "value")
    }))
})

/**
 * Secrets (spec 2.5, 4.9, 5.6, 7, 8) and secret contexts (this service's
 * design, README): write-only values sealed at rest, names unique per
 * organization, list filters, delete refused while bound, workspace
 * isolation, and master-key rotation against the database itself.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted, Schema } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { TestClock } from "effect/testing"
import { createHash } from "node:crypto"
import { Deleted, Page } from "../../domain/Page.ts"
import { Secret } from "../../domain/Secret.ts"
import { SecretContext } from "../../domain/SecretContext.ts"
import { parseMasterKey, SecretBox } from "../../src/secrets/SecretBox.ts"
import * as Collection from "../support/Collection.ts"
import * as McpServers from "../support/McpServers.ts"
import {
  byOtherTenants,
  call,
  expectDenied,
  expectInvalid,
  expectNotFound,
  resourceRoutes
} from "../support/Refusals.ts"
import { testDatabase } from "../support/TestDatabase.ts"
import * as TestServer from "../support/TestServer.ts"

const { Keys, nowIso, request } = TestServer

// ---- helpers ----------------------------------------------------------------

const { create: createSecret } = Collection.secrets
const { create: createContext } = Collection.secretContexts

const SecretPage = Page(Secret)
const ContextPage = Page(SecretContext)

/** The secret's value must not appear anywhere in a response. */
const assertNoValue = (reply: TestServer.Reply, ...values: ReadonlyArray<string>) => {
  for (const value of values) {
    assert.isFalse(reply.text.includes(value), `the value leaked into: ${reply.text.slice(0, 500)}`)
  }
}

const toolServer = (name: string, secretId: string, url = "https://93.184.215.14/mcp") =>
  Collection.toolServers.create({ name, transport: "http", url, auth: { type: "bearer", secretId } })

const httpConnection = (name: string, secretId: string) =>
  Collection.httpConnections.create({
    name,
    spec: "https://93.184.215.14/openapi.json",
    baseUrl: "https://93.184.215.14",
    auth: { type: "bearer", secretId }
  })

/** Every route that addresses a secret, or a secret context, by id. */
const secretRoutes = resourceRoutes(Collection.secrets.path, { name: "renamed" }, [["rotate", { value: "v" }]])
const contextRoutes = resourceRoutes(Collection.secretContexts.path, { name: "renamed" })

const unique = Collection.uniqueName

// ---- secrets on one shared server -------------------------------------------

// The service's default body cap (1 MiB), so a 64 KiB value is reachable.
TestServer.suite({ maxBodyBytes: 1_048_576 })("secrets", (it) => {
  it.effect("POST /v1/secrets answers 200 with the secret and never its value; GET returns the same", () =>
    Effect.gen(function*() {
      const now = yield* nowIso
      const value = "s3cr3t-value-create-minimal"
      const reply = yield* request("POST", "/v1/secrets", { body: { name: "create-minimal", value } })
      const secret = yield* TestServer.expectOk(reply, 200, Secret)
      assert.match(secret.id, /^sec_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(reply.json, {
        id: secret.id,
        object: "secret",
        name: "create-minimal",
        source: "svc",
        contentType: null,
        metadata: {},
        configVersion: 1,
        createdAt: now,
        updatedAt: now
      })
      assertNoValue(reply, value)
      const read = yield* request("GET", `/v1/secrets/${secret.id}`)
      assert.strictEqual(read.status, 200)
      assert.deepStrictEqual(read.json, reply.json)
      assertNoValue(read, value)
    }))

  it.effect("POST /v1/secrets echoes source 'svc', contentType and metadata", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 second")
      const now = yield* nowIso
      const value = "-----BEGIN KEY-----full-----END KEY-----"
      const reply = yield* request("POST", "/v1/secrets", {
        body: {
          name: "Not an ENV name: spaces & symbols!",
          value,
          source: "svc",
          contentType: "application/x-pem-file",
          metadata: { team: "core" }
        }
      })
      const secret = yield* TestServer.expectOk(reply, 200, Secret)
      assert.deepStrictEqual(reply.json, {
        id: secret.id,
        object: "secret",
        name: "Not an ENV name: spaces & symbols!",
        source: "svc",
        contentType: "application/x-pem-file",
        metadata: { team: "core" },
        configVersion: 1,
        createdAt: now,
        updatedAt: now
      })
      assertNoValue(reply, value)
      // contentType null is accepted explicitly.
      const plain = yield* createSecret({ name: "create-null-content-type", value: "v", contentType: null })
      assert.isNull(plain.contentType)
    }))

  it.effect("value: non-empty, at most 65,536 UTF-8 bytes (multi-byte characters count as bytes)", () =>
    Effect.gen(function*() {
      yield* expectInvalid(yield* request("POST", "/v1/secrets", { body: { name: "size-empty", value: "" } }), "value")
      yield* expectInvalid(yield* request("POST", "/v1/secrets", { body: { name: "size-missing" } }), "value")
      yield* expectInvalid(yield* request("POST", "/v1/secrets", { body: { name: "size-number", value: 42 } }), "value")

      const ascii = yield* createSecret({ name: "size-ascii-max", value: "a".repeat(65_536) })
      assert.strictEqual(ascii.configVersion, 1)
      const over = yield* request("POST", "/v1/secrets", {
        body: { name: "size-ascii-over", value: "a".repeat(65_537) }
      })
      yield* expectInvalid(over, "value")

      // 32,768 two-byte characters are exactly 65,536 bytes; one more byte is too many,
      // although the string has far fewer than 65,536 characters.
      yield* createSecret({ name: "size-2byte-max", value: "é".repeat(32_768) })
      yield* expectInvalid(
        yield* request("POST", "/v1/secrets", { body: { name: "size-2byte-over", value: "é".repeat(32_768) + "a" } }),
        "value"
      )
      // Four-byte characters: 16,384 fit, 16,385 do not (32,770 UTF-16 units).
      yield* createSecret({ name: "size-4byte-max", value: "😀".repeat(16_384) })
      yield* expectInvalid(
        yield* request("POST", "/v1/secrets", { body: { name: "size-4byte-over", value: "😀".repeat(16_385) } }),
        "value"
      )
      // Nothing was stored for the refused bodies.
      const listed = yield* TestServer.expectOk(
        yield* request("GET", "/v1/secrets?name=size-2byte-over"),
        200,
        SecretPage
      )
      assert.deepStrictEqual(listed.data, [])

      // Rotate has the same limits.
      yield* expectInvalid(yield* request("POST", `/v1/secrets/${ascii.id}/rotate`, { body: { value: "" } }), "value")
      yield* expectInvalid(
        yield* request("POST", `/v1/secrets/${ascii.id}/rotate`, { body: { value: "é".repeat(32_769) } }),
        "value"
      )
      const rotated = yield* TestServer.expectOk(
        yield* request("POST", `/v1/secrets/${ascii.id}/rotate`, { body: { value: "é".repeat(32_768) } }),
        200,
        Secret
      )
      assert.strictEqual(rotated.configVersion, 2)
    }))

  it.effect("name: 1 to 128 characters; source: only 'svc'; metadata: a flat string map", () =>
    Effect.gen(function*() {
      yield* expectInvalid(yield* request("POST", "/v1/secrets", { body: { name: "", value: "v" } }), "name")
      yield* expectInvalid(yield* request("POST", "/v1/secrets", { body: { value: "v" } }), "name")
      yield* expectInvalid(
        yield* request("POST", "/v1/secrets", { body: { name: "n".repeat(129), value: "v" } }),
        "name"
      )
      const longest = yield* createSecret({ name: "n".repeat(128), value: "v" })
      assert.strictEqual(longest.name, "n".repeat(128))

      yield* expectInvalid(
        yield* request("POST", "/v1/secrets", { body: { name: "source-external", value: "v", source: "external" } }),
        "source"
      )
      yield* expectInvalid(
        yield* request("POST", "/v1/secrets", { body: { name: "source-other", value: "v", source: "vault" } }),
        "source"
      )
      yield* expectInvalid(
        yield* request("POST", "/v1/secrets", { body: { name: "metadata-number", value: "v", metadata: { k: 1 } } }),
        "metadata.k"
      )
      yield* expectInvalid(
        yield* request("POST", "/v1/secrets", {
          body: { name: "metadata-nested", value: "v", metadata: { k: { a: "b" } } }
        }),
        "metadata.k"
      )
      yield* expectInvalid(
        yield* request("POST", "/v1/secrets", { body: { name: "content-type-number", value: "v", contentType: 5 } }),
        "contentType"
      )
    }))

  it.effect("the value never appears in a response or an error message", () =>
    Effect.gen(function*() {
      const value = "LEAKCHECK-9f3c2e7a1b"
      const rotatedValue = "LEAKCHECK-ROTATED-44d1e0"
      const created = yield* request("POST", "/v1/secrets", {
        body: { name: "leak-check", value, metadata: { kind: "leak" } }
      })
      const secret = yield* TestServer.expectOk(created, 200, Secret)
      assertNoValue(created, value)
      assertNoValue(yield* request("GET", `/v1/secrets/${secret.id}`), value)
      assertNoValue(yield* request("GET", "/v1/secrets"), value)
      assertNoValue(yield* request("GET", "/v1/secrets?name=leak-check"), value)
      assertNoValue(yield* request("PATCH", `/v1/secrets/${secret.id}`, { body: { contentType: "text/plain" } }), value)
      const rotated = yield* request("POST", `/v1/secrets/${secret.id}/rotate`, { body: { value: rotatedValue } })
      assert.strictEqual(rotated.status, 200)
      assertNoValue(rotated, value, rotatedValue)
      assertNoValue(yield* request("GET", `/v1/secrets/${secret.id}`), value, rotatedValue)

      // Refused bodies that carry a value do not echo it.
      const refusals: ReadonlyArray<readonly [unknown, string]> = [
        [{ name: "leak-bad-metadata", value, metadata: { k: 1 } }, "metadata.k"],
        [{ name: "leak-bad-metadata-2", value, metadata: "not a map" }, "metadata"],
        [{ name: "n".repeat(129), value }, "name"],
        [{ name: "leak-bad-source", value, source: "external" }, "source"],
        [{ name: "leak-bad-content-type", value, contentType: 7 }, "contentType"],
        [{ name: "leak-excess", value, copy: value }, "copy"]
      ]
      for (const [body, field] of refusals) {
        const reply = yield* request("POST", "/v1/secrets", { body })
        yield* expectInvalid(reply, field)
        assertNoValue(reply, value)
      }
      const conflict = yield* request("POST", "/v1/secrets", { body: { name: "leak-check", value } })
      yield* TestServer.expectError(conflict, 409, "api_error", "name_conflict")
      assertNoValue(conflict, value)
      // An oversized value is described by its size, not echoed.
      const big = "LEAKBIG-" + "x".repeat(65_536)
      const oversized = yield* request("POST", "/v1/secrets", { body: { name: "leak-big", value: big } })
      yield* expectInvalid(oversized, "value")
      assertNoValue(oversized, "LEAKBIG-", "x".repeat(100))
      const badRotate = yield* request("POST", `/v1/secrets/${secret.id}/rotate`, { body: { value: big } })
      yield* expectInvalid(badRotate, "value")
      assertNoValue(badRotate, "LEAKBIG-", "x".repeat(100))
      // Rotate with a wrongly typed body does not echo the rest of it either.
      const badRotateBody = yield* request("POST", `/v1/secrets/${secret.id}/rotate`, {
        body: { value: 1, note: value }
      })
      yield* TestServer.expectError(badRotateBody, 400, "invalid_request_error", "invalid_request_error")
      assertNoValue(badRotateBody, value)
      // Deleting does not return it either.
      const deleted = yield* request("DELETE", `/v1/secrets/${secret.id}`)
      assert.strictEqual(deleted.status, 200)
      assertNoValue(deleted, value, rotatedValue)
    }))

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
      const ts = yield* toolServer("ts1", secret.id)
      const hc = yield* httpConnection("hc1", secret.id)
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

// ---- listing and filters, on a fresh database -------------------------------

TestServer.suite()("secrets list", (it) => {
  it.effect("GET /v1/secrets pages newest first with limit and cursor, in the caller's workspace only", () =>
    Effect.gen(function*() {
      const empty = yield* request("GET", "/v1/secrets")
      assert.strictEqual(empty.status, 200)
      assert.deepStrictEqual(empty.json, { object: "list", data: [], hasMore: false, nextCursor: null, limit: 20 })

      const created: Array<Secret> = []
      for (let i = 0; i < 7; i++) {
        yield* TestClock.adjust("1 second")
        created.push(yield* createSecret({ name: `page-${i}`, value: `value-${i}` }))
      }
      // Other workspaces' secrets are not listed.
      yield* createSecret({ name: "page-staging", value: "x" }, Keys.b)
      yield* createSecret({ name: "page-globex", value: "x" }, Keys.c)
      const newestFirst = [...created].reverse()

      const all = yield* request("GET", "/v1/secrets")
      assert.deepStrictEqual(all.json, {
        object: "list",
        data: newestFirst,
        hasMore: false,
        nextCursor: null,
        limit: 20
      })
      for (let i = 0; i < 7; i++) assertNoValue(all, `value-${i}`)

      const seen: Array<string> = []
      const shapes: Array<readonly [number, boolean]> = []
      let cursor: string | null = null
      do {
        const path: string = cursor === null
          ? "/v1/secrets?limit=3"
          : `/v1/secrets?limit=3&cursor=${encodeURIComponent(cursor)}`
        const page = yield* TestServer.expectOk(yield* request("GET", path), 200, SecretPage)
        assert.strictEqual(page.limit, 3)
        assert.strictEqual(page.nextCursor === null, !page.hasMore)
        shapes.push([page.data.length, page.hasMore])
        seen.push(...page.data.map((s) => s.id))
        cursor = page.nextCursor
      } while (cursor !== null)
      assert.deepStrictEqual(shapes, [[3, true], [3, true], [1, false]])
      assert.deepStrictEqual(seen, newestFirst.map((s) => s.id))

      const staging = yield* TestServer.expectOk(yield* request("GET", "/v1/secrets", { key: Keys.b }), 200, SecretPage)
      assert.deepStrictEqual(staging.data.map((s) => s.name), ["page-staging"])
      const globex = yield* TestServer.expectOk(yield* request("GET", "/v1/secrets", { key: Keys.c }), 200, SecretPage)
      assert.deepStrictEqual(globex.data.map((s) => s.name), ["page-globex"])

      yield* expectInvalid(yield* request("GET", "/v1/secrets?limit=0"), "limit")
      yield* expectInvalid(yield* request("GET", "/v1/secrets?limit=101"), "limit")
    }))

  it.effect("?name= is an exact match and ?metadata[key]=value pairs must all match", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 second")
      const a = yield* createSecret({ name: "filter-a", value: "1", metadata: { team: "a", tier: "b" } })
      yield* TestClock.adjust("1 second")
      const b = yield* createSecret({ name: "filter-a-2", value: "2", metadata: { team: "a", tier: "c" } })
      yield* TestClock.adjust("1 second")
      const c = yield* createSecret({ name: "FILTER-A", value: "3", metadata: { team: "b", tier: "b", extra: "x" } })
      yield* TestClock.adjust("1 second")
      const d = yield* createSecret({ name: "filter-d", value: "4" })

      const names = (query: string) =>
        Effect.map(
          Effect.flatMap(
            request("GET", `/v1/secrets?${query}`),
            (reply) => TestServer.expectOk(reply, 200, SecretPage)
          ),
          (page) => page.data.map((s) => s.id)
        )

      assert.deepStrictEqual(yield* names("name=filter-a"), [a.id])
      assert.deepStrictEqual(yield* names("name=FILTER-A"), [c.id])
      assert.deepStrictEqual(yield* names("name=filter"), [])
      assert.deepStrictEqual(yield* names(`name=${encodeURIComponent("filter-a-2")}`), [b.id])

      assert.deepStrictEqual(yield* names("metadata[team]=a"), [b.id, a.id])
      assert.deepStrictEqual(yield* names("metadata[tier]=b"), [c.id, a.id])
      assert.deepStrictEqual(yield* names("metadata[team]=a&metadata[tier]=b"), [a.id])
      assert.deepStrictEqual(yield* names("metadata%5Bteam%5D=a&metadata%5Btier%5D=c"), [b.id])
      assert.deepStrictEqual(yield* names("metadata[team]=b&metadata[tier]=c"), [])
      assert.deepStrictEqual(yield* names("metadata[extra]=x"), [c.id])
      assert.deepStrictEqual(yield* names("metadata[team]=A"), [])
      assert.deepStrictEqual(yield* names("metadata[missing]=a"), [])
      // Containment is exact on values, not a prefix.
      assert.deepStrictEqual(yield* names("metadata[team]="), [])

      assert.deepStrictEqual(yield* names("name=filter-a&metadata[team]=a"), [a.id])
      assert.deepStrictEqual(yield* names("name=filter-a&metadata[tier]=c"), [])

      // Filters page like the full list.
      const first = yield* TestServer.expectOk(
        yield* request("GET", "/v1/secrets?metadata[team]=a&limit=1"),
        200,
        SecretPage
      )
      assert.deepStrictEqual(first.data.map((s) => s.id), [b.id])
      assert.isTrue(first.hasMore)
      const second = yield* TestServer.expectOk(
        yield* request(
          "GET",
          `/v1/secrets?metadata[team]=a&limit=1&cursor=${encodeURIComponent(first.nextCursor ?? "")}`
        ),
        200,
        SecretPage
      )
      assert.deepStrictEqual(second.data.map((s) => s.id), [a.id])
      assert.isFalse(second.hasMore)

      // Another workspace sees none of them through filters.
      const other = yield* TestServer.expectOk(
        yield* request("GET", "/v1/secrets?metadata[team]=a", { key: Keys.b }),
        200,
        SecretPage
      )
      assert.deepStrictEqual(other.data, [])
      // Without filters, the newest (unlabelled) secret comes first.
      assert.deepStrictEqual(yield* names("limit=1"), [d.id])
    }))
})

// ---- secret contexts ----------------------------------------------------------

TestServer.suite()("secret contexts", (it) => {
  it.effect("POST /v1/secret-contexts answers 200 with the context; GET, list and PATCH", () =>
    Effect.gen(function*() {
      const s1 = yield* createSecret({ name: "ctx-s1", value: "one" })
      const s2 = yield* createSecret({ name: "ctx-s2", value: "two" })
      yield* TestClock.adjust("1 second")
      const now = yield* nowIso
      const projections = [
        { type: "workspace_env" as const, secretId: s1.id, env: "GITHUB_TOKEN" },
        { type: "workspace_env" as const, secretId: s2.id, env: "_private9" },
        { type: "workspace_env" as const, secretId: s1.id, env: "SAME_SECRET_TWICE" }
      ]
      const reply = yield* request("POST", "/v1/secret-contexts", {
        body: { name: "deploy-env", projections, metadata: { team: "core" } }
      })
      const ctx = yield* TestServer.expectOk(reply, 200, SecretContext)
      assert.match(ctx.id, /^sctx_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(reply.json, {
        id: ctx.id,
        object: "secret_context",
        name: "deploy-env",
        projections,
        metadata: { team: "core" },
        configVersion: 1,
        createdAt: now,
        updatedAt: now
      })
      assertNoValue(reply, "one", "two")
      const read = yield* request("GET", `/v1/secret-contexts/${ctx.id}`)
      assert.deepStrictEqual(read.json, reply.json)

      const minimal = yield* createContext({ name: "empty-ctx", projections: [] })
      assert.deepStrictEqual(minimal.metadata, {})
      assert.deepStrictEqual(minimal.projections, [])

      const listed = yield* TestServer.expectOk(yield* request("GET", "/v1/secret-contexts"), 200, ContextPage)
      assert.deepStrictEqual(listed.data.map((c) => c.id).slice(0, 2).sort(), [ctx.id, minimal.id].sort())
      const firstPage = yield* TestServer.expectOk(
        yield* request("GET", "/v1/secret-contexts?limit=1"),
        200,
        ContextPage
      )
      assert.strictEqual(firstPage.data.length, 1)
      assert.isTrue(firstPage.hasMore)

      // Metadata only: no version bump.
      yield* TestClock.adjust("1 second")
      const t1 = yield* nowIso
      const meta = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secret-contexts/${ctx.id}`, { body: { metadata: { team: null, env: "prod" } } }),
        200,
        SecretContext
      )
      assert.deepStrictEqual(meta, { ...ctx, metadata: { env: "prod" }, updatedAt: t1 })
      // The same projections again: no bump.
      const same = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secret-contexts/${ctx.id}`, { body: { projections } }),
        200,
        SecretContext
      )
      assert.strictEqual(same.configVersion, 1)
      // Projections are replaced wholesale.
      const replaced = [{ type: "workspace_env" as const, secretId: s2.id, env: "ONLY" }]
      const patched = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secret-contexts/${ctx.id}`, { body: { projections: replaced } }),
        200,
        SecretContext
      )
      assert.deepStrictEqual(patched.projections, replaced)
      assert.strictEqual(patched.configVersion, 2)
      const renamed = yield* TestServer.expectOk(
        yield* request("PATCH", `/v1/secret-contexts/${ctx.id}`, { body: { name: "deploy-env-2" } }),
        200,
        SecretContext
      )
      assert.strictEqual(renamed.name, "deploy-env-2")
      assert.strictEqual(renamed.configVersion, 3)
      assert.deepStrictEqual(renamed.projections, replaced)
      assert.deepStrictEqual(
        yield* TestServer.expectOk(yield* request("GET", `/v1/secret-contexts/${ctx.id}`), 200, SecretContext),
        renamed
      )
    }))

  it.effect("projections: env names, unique env per context, secrets of the caller's workspace", () =>
    Effect.gen(function*() {
      const mine = yield* createSecret({ name: "proj-mine", value: "m" })
      const staging = yield* createSecret({ name: "proj-staging", value: "s" }, Keys.b)
      const globex = yield* createSecret({ name: "proj-globex", value: "g" }, Keys.c)
      const post = (projections: unknown, name = "proj-ctx") =>
        request("POST", "/v1/secret-contexts", { body: { name, projections } })
      const env = (value: string) => [{ type: "workspace_env", secretId: mine.id, env: value }]

      for (const bad of ["1BAD", "HAS-DASH", "has space", "", "ÄNV", "A.B"]) {
        yield* expectInvalid(yield* post(env(bad)), "projections[0].env")
      }
      // Names the sandbox sets, or that the host programs starting it would obey (some run as root).
      for (
        const reserved of [
          "PATH",
          "LD_PRELOAD",
          "ld_library_path",
          "GLIBC_TUNABLES",
          "BASH_ENV",
          "HOME",
          "LC_ALL",
          "HTTPS_PROXY",
          "GCONV_PATH"
        ]
      ) {
        const error = yield* expectInvalid(yield* post(env(reserved)), "projections[0].env")
        assert.include(error.message, "is reserved")
      }
      assert.strictEqual(
        (yield* createContext({ name: "proj-pathlike", projections: env("MY_PATH") })).projections[0]?.env,
        "MY_PATH"
      )
      const longest = yield* createContext({ name: "proj-longest", projections: env("E".repeat(128)) })
      assert.strictEqual(longest.projections[0]?.env, "E".repeat(128))

      yield* expectInvalid(
        yield* post([
          { type: "workspace_env", secretId: mine.id, env: "DUP" },
          { type: "workspace_env", secretId: mine.id, env: "DUP" }
        ]),
        "projections[1].env"
      )
      yield* expectInvalid(
        yield* post([{ type: "workspace_env", secretId: "sec_0000000000000000000000", env: "X" }]),
        "projections[0].secretId"
      )
      yield* expectInvalid(
        yield* post([{ type: "workspace_env", secretId: staging.id, env: "X" }]),
        "projections[0].secretId"
      )
      yield* expectInvalid(
        yield* post([{ type: "workspace_env", secretId: globex.id, env: "X" }]),
        "projections[0].secretId"
      )
      yield* expectInvalid(
        yield* post([
          { type: "workspace_env", secretId: mine.id, env: "OK" },
          { type: "workspace_env", secretId: staging.id, env: "X" }
        ]),
        "projections[1].secretId"
      )
      yield* expectInvalid(yield* post([{ type: "file", secretId: mine.id, env: "X" }]), "projections[0].type")
      yield* expectInvalid(yield* post([{ type: "workspace_env", env: "X" }]), "projections[0].secretId")
      yield* expectInvalid(yield* post(undefined), "projections")
      yield* expectInvalid(yield* post(env("OK"), ""), "name")
      // None of the refused bodies created anything.
      const listed = yield* TestServer.expectOk(yield* request("GET", "/v1/secret-contexts"), 200, ContextPage)
      assert.isFalse(listed.data.some((c) => c.name === "proj-ctx"))

      // PATCH checks projections the same way and changes nothing on failure.
      const ctx = yield* createContext({ name: "proj-patch", projections: env("OK") })
      yield* expectInvalid(
        yield* request("PATCH", `/v1/secret-contexts/${ctx.id}`, {
          body: { projections: [{ type: "workspace_env", secretId: staging.id, env: "X" }] }
        }),
        "projections[0].secretId"
      )
      yield* expectInvalid(
        yield* request("PATCH", `/v1/secret-contexts/${ctx.id}`, {
          body: {
            projections: [
              { type: "workspace_env", secretId: mine.id, env: "A" },
              { type: "workspace_env", secretId: mine.id, env: "A" }
            ]
          }
        }),
        "projections[1].env"
      )
      yield* expectInvalid(
        yield* request("PATCH", `/v1/secret-contexts/${ctx.id}`, { body: { projections: env("1BAD") } }),
        "projections[0].env"
      )
      assert.deepStrictEqual(
        yield* TestServer.expectOk(yield* request("GET", `/v1/secret-contexts/${ctx.id}`), 200, SecretContext),
        ctx
      )
    }))

  it.effect("names are unique per organization: 409 name_conflict on create and rename", () =>
    Effect.gen(function*() {
      const first = yield* createContext({ name: "ctx-unique", projections: [] })
      const conflict = yield* TestServer.expectError(
        yield* request("POST", "/v1/secret-contexts", { body: { name: "ctx-unique", projections: [] } }),
        409,
        "api_error",
        "name_conflict"
      )
      assert.deepStrictEqual(conflict.details, { field: "name" })
      yield* TestServer.expectError(
        yield* request("POST", "/v1/secret-contexts", { key: Keys.b, body: { name: "ctx-unique", projections: [] } }),
        409,
        "api_error",
        "name_conflict"
      )
      yield* createContext({ name: "ctx-unique", projections: [] }, Keys.c)
      // A secret and a context may share a name: uniqueness is per resource kind.
      yield* createSecret({ name: "ctx-unique", value: "v" })

      const second = yield* createContext({ name: "ctx-unique-2", projections: [] })
      const rename = yield* TestServer.expectError(
        yield* request("PATCH", `/v1/secret-contexts/${second.id}`, { body: { name: "ctx-unique" } }),
        409,
        "api_error",
        "name_conflict"
      )
      assert.deepStrictEqual(rename.details, { field: "name" })
      assert.deepStrictEqual(
        yield* TestServer.expectOk(yield* request("GET", `/v1/secret-contexts/${second.id}`), 200, SecretContext),
        second
      )
      assert.strictEqual(first.configVersion, 1)
    }))

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

// ---- encryption at rest and master-key rotation -------------------------------

const SealedRow = Schema.Struct({ id: Schema.String, sealed: Schema.String, key_id: Schema.String })
const TableName = Schema.Struct({ table_name: Schema.String })
const Dump = Schema.Struct({ dump: Schema.NullOr(Schema.String) })

/** Runs `f` with a client of its own on the test database. */
const withDb = <A>(url: string, f: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>) =>
  Effect.scoped(Effect.flatMap(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }), f)).pipe(
    Effect.provide(Reactivity.layer),
    Effect.orDie
  )

const sealedRows = (url: string) =>
  withDb(url, (sql) =>
    Effect.flatMap(
      sql`SELECT id, sealed, key_id FROM secrets ORDER BY id`,
      Schema.decodeUnknownEffect(Schema.Array(SealedRow))
    )).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.id, r]))))

/** Every row of every table of the database, as text. */
const dumpDatabase = (url: string) =>
  withDb(url, (sql) =>
    Effect.gen(function*() {
      const tables = yield* Effect.flatMap(
        sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
        Schema.decodeUnknownEffect(Schema.Array(TableName))
      )
      const dumps = yield* Effect.forEach(tables, ({ table_name }) =>
        Effect.flatMap(
          sql.unsafe(`SELECT string_agg(t::text, E'\\n') AS dump FROM "${table_name.replaceAll("\"", "\"\"")}" t`),
          Schema.decodeUnknownEffect(Schema.Array(Dump))
        ))
      return {
        tables: tables.map((t) => t.table_name),
        text: dumps.flatMap((rows) => rows.map((r) => r.dump ?? "")).join("\n")
      }
    }))

const keyIdOf = (base64Key: string) =>
  createHash("sha256").update(Buffer.from(base64Key, "base64")).digest("hex").slice(0, 16)

const masterKeyOf = (base64Key: string) => {
  const parsed = parseMasterKey(base64Key)
  if (typeof parsed === "string") throw new Error(parsed)
  return parsed
}

/** The tool server test route: 502 (the recorder is no MCP server), and the bearer it was sent. */
const testToolServer = (id: string) =>
  Effect.flatMap(
    request("POST", `/v1/tool-servers/${id}/test`),
    (reply) => Effect.as(TestServer.expectError(reply, 502, "api_error", "service_unavailable"), reply)
  )

describe("secrets at rest", () => {
  it.effect(
    "the database holds only AES-GCM ciphertext under the master key's id; a new master key re-seals on rotate",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const hook = yield* McpServers.authRecorder
        const oldKey = TestServer.testMasterKey
        const newKey = Buffer.alloc(32, 9).toString("base64")
        const oldKeyId = keyIdOf(oldKey)
        const newKeyId = keyIdOf(newKey)
        assert.strictEqual(masterKeyOf(oldKey).id, oldKeyId)
        const valueA = "AT-REST-alpha-7c1d0f"
        const valueB = "AT-REST-bravo-e93b22-ünïcödé"
        const valueA2 = "AT-REST-alpha-rotated-5a8e"

        // ---- first server: the test master key ----
        const first = yield* Effect.gen(function*() {
          const a = yield* createSecret({ name: "rest-a", value: valueA })
          const b = yield* createSecret({ name: "rest-b", value: valueB, metadata: { k: "v" } })
          // The same value sealed twice gives different ciphertexts (random IV).
          const twin = yield* createSecret({ name: "rest-twin", value: valueA })
          const tsA = yield* toolServer("ts-rest-a", a.id, `${hook.url}/a`)
          const tsB = yield* toolServer("ts-rest-b", b.id, `${hook.url}/b`)
          const probe = yield* testToolServer(tsB.id)
          assertNoValue(probe, valueB)
          return { a, b, twin, tsA, tsB }
        }).pipe(
          Effect.provide(TestServer.layerWith(TestServer.baseConfig(db.url, yield* TestServer.freePort))),
          Effect.orDie
        )
        assert.deepStrictEqual(hook.authorizations("/b"), [`Bearer ${valueB}`])

        const rows = yield* sealedRows(db.url)
        const box = SecretBox.make(masterKeyOf(oldKey), [])
        for (const [secret, value] of [[first.a, valueA], [first.b, valueB], [first.twin, valueA]] as const) {
          const row = rows.get(secret.id)
          assert.isDefined(row)
          if (row === undefined) return
          assert.strictEqual(row.key_id, oldKeyId)
          assert.isFalse(row.sealed.includes(value))
          assert.isFalse(row.sealed.includes(Buffer.from(value).toString("base64")))
          // iv (12) + tag (16) + one byte per byte of plaintext
          assert.strictEqual(Buffer.from(row.sealed, "base64").length, 28 + Buffer.byteLength(value))
          const opened = yield* box.open({ ciphertext: row.sealed, keyId: row.key_id })
          assert.strictEqual(Redacted.value(opened), value)
        }
        assert.notStrictEqual(rows.get(first.a.id)?.sealed, rows.get(first.twin.id)?.sealed)
        // No table of the database holds a plaintext value.
        const dump = yield* dumpDatabase(db.url)
        assert.include(dump.tables, "secrets")
        for (const value of [valueA, valueB]) {
          assert.isFalse(dump.text.includes(value), `plaintext ${value} found in the database`)
          assert.isFalse(dump.text.includes(Buffer.from(value).toString("base64")))
        }

        // ---- second server: a new master key, the old one kept for decryption ----
        yield* Effect.gen(function*() {
          // Values sealed under the old key are still readable and usable.
          assert.deepStrictEqual(
            yield* TestServer.expectOk(yield* request("GET", `/v1/secrets/${first.b.id}`), 200, Secret),
            first.b
          )
          const probeB = yield* testToolServer(first.tsB.id)
          assertNoValue(probeB, valueB)
          const probeA = yield* testToolServer(first.tsA.id)
          assertNoValue(probeA, valueA)
          // Rotating re-seals under the new key.
          const rotated = yield* request("POST", `/v1/secrets/${first.a.id}/rotate`, { body: { value: valueA2 } })
          assert.strictEqual((yield* TestServer.expectOk(rotated, 200, Secret)).configVersion, 2)
          assertNoValue(rotated, valueA, valueA2)
          const probeA2 = yield* testToolServer(first.tsA.id)
          assertNoValue(probeA2, valueA2)
          // New secrets are sealed under the new key.
          yield* createSecret({ name: "rest-c", value: "AT-REST-charlie" })
        }).pipe(
          Effect.provide(
            TestServer.layerWith({
              ...TestServer.baseConfig(db.url, yield* TestServer.freePort),
              masterKey: Option.some(Redacted.make(newKey)),
              previousMasterKeys: [Redacted.make(oldKey)]
            })
          ),
          Effect.orDie
        )
        assert.deepStrictEqual(hook.authorizations("/b"), [`Bearer ${valueB}`])
        assert.deepStrictEqual(hook.authorizations("/a"), [`Bearer ${valueA}`, `Bearer ${valueA2}`])

        const after = yield* sealedRows(db.url)
        const newBox = SecretBox.make(masterKeyOf(newKey), [masterKeyOf(oldKey)])
        const rowA = after.get(first.a.id)
        const rowB = after.get(first.b.id)
        assert.isDefined(rowA)
        assert.isDefined(rowB)
        if (rowA === undefined || rowB === undefined) return
        assert.strictEqual(rowA.key_id, newKeyId)
        assert.strictEqual(Redacted.value(yield* newBox.open({ ciphertext: rowA.sealed, keyId: rowA.key_id })), valueA2)
        assert.strictEqual(rowB.key_id, oldKeyId)
        assert.strictEqual(rowB.sealed, rows.get(first.b.id)?.sealed)
        assert.strictEqual(Redacted.value(yield* newBox.open({ ciphertext: rowB.sealed, keyId: rowB.key_id })), valueB)
        const rowC = [...after.values()].find((r) => !rows.has(r.id))
        assert.strictEqual(rowC?.key_id, newKeyId)
        const dumpAfter = yield* dumpDatabase(db.url)
        assert.isFalse(dumpAfter.text.includes(valueA2))
        assert.isFalse(dumpAfter.text.includes("AT-REST-charlie"))
      }),
    120_000
  )
})

/**
 * Secrets (spec 2.5, 4.9, 8): creating and reading one, the limits on its
 * value, name, source and metadata, and its value never coming back in a
 * response or an error message. Names and updates: SecretUpdates; lists:
 * SecretsList; refusals: SecretRefusals; contexts: SecretContexts and
 * SecretContextReferences; encryption at rest: SecretsAtRest.
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

const { nowIso, request } = TestServer
const { create: createSecret } = Collection.secrets

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
})

/**
 * Secret contexts (this service's design, README): creating, reading, listing
 * and updating one; its projections (env names, one env per context, secrets
 * of the caller's workspace only); names unique per organization. Agents'
 * references and the refusals: SecretContextReferences.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { SecretContext } from "../../domain/SecretContext.ts"
import * as Collection from "../support/Collection.ts"
import { expectInvalid } from "../support/Refusals.ts"
import { ContextPage } from "../support/Secrets.ts"
import * as TestServer from "../support/TestServer.ts"
import { assertNoValue } from "../support/WriteOnly.ts"

const { Keys, nowIso, request } = TestServer
const { create: createSecret } = Collection.secrets
const { create: createContext } = Collection.secretContexts

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
})

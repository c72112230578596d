/**
 * API keys: what is kept of a key beside its hash, and the keys service on a
 * real database as two processes of one deployment use it (two instances,
 * each with its own cache of valid keys): how soon a revocation reaches each,
 * seeds from SVC_API_KEYS (role, removal, a revocation through the API that
 * outlasts a restart), `lastUsedAt`, and who may manage keys.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Redacted } from "effect"
import { TestClock } from "effect/testing"
import type { ApiKeyRole } from "../../../domain/ApiKey.ts"
import type { Principal } from "../../../domain/Principal.ts"
import { ApiKeys, displayPrefix, keyCacheMs } from "../../../src/access/ApiKeys.ts"
import { IdGenerator } from "../../../src/IdGenerator.ts"
import * as Database from "../../../src/store/Database.ts"
import * as Migrations from "../../../src/store/Migrations.ts"
import { toIso } from "../../../src/Time.ts"
import { testDatabase } from "../../support/TestDatabase.ts"

describe("API key display prefix", () => {
  it("keeps seven characters of a minted key", () => {
    assert.strictEqual(displayPrefix("sk_3h0Xr9aBcDeFgHiJkLmNoPqRsTu"), "sk_3h0X")
  })
  it("keeps at most a quarter of a short seeded key", () => {
    assert.strictEqual(displayPrefix("sk_test_acme_prod"), "sk_t")
    assert.strictEqual(displayPrefix("sk_a"), "s")
    assert.strictEqual(displayPrefix("abc"), "")
  })
})

/** A database with the schema, shared by every "process" a test builds on it. */
const Storage = Layer.unwrap(
  Effect.map(testDatabase, (db) =>
    Layer.mergeAll(Migrations.layer, IdGenerator.layer).pipe(
      Layer.provideMerge(Database.layerUrl(Redacted.make(db.url)))
    ))
)

/** One process's keys service: an instance of its own, with its own cache. */
const process_ = Effect.map(Layer.build(Layer.fresh(ApiKeys.layer)), Context.get(ApiKeys))

const mint = (keys: ApiKeys["Service"], organizationId: string, role: ApiKeyRole) =>
  Effect.map(keys.mint(organizationId, "prod", { source: "api", name: `a ${role}`, role }), (m) => ({
    token: m.key,
    principal: {
      keyId: m.record.id,
      organizationId,
      workspaceId: "prod",
      role
    } satisfies Principal
  }))

const refused = (keys: ApiKeys["Service"], token: Redacted.Redacted) =>
  Effect.map(Effect.flip(keys.authenticate(token)), (e) => e._tag)

layer(Storage, { timeout: 60_000 })("the keys service across processes", (it) => {
  it.effect("a revoked key is refused at once where it was revoked, and within 5 s by a process that remembers it", () =>
    Effect.gen(function*() {
      const [a, b] = [yield* process_, yield* process_]
      const admin = yield* mint(a, "org_bound", "admin")
      const member = yield* mint(a, "org_bound", "member")
      // Both processes have seen the key valid (and remember it).
      assert.strictEqual((yield* a.authenticate(member.token)).keyId, member.principal.keyId)
      assert.strictEqual((yield* b.authenticate(member.token)).keyId, member.principal.keyId)

      const revoked = yield* a.revoke(admin.principal, member.principal.keyId)
      assert.strictEqual(revoked.revokedAt, toIso(yield* Clock.currentTimeMillis))
      assert.strictEqual(yield* refused(a, member.token), "Unauthenticated")
      // The other process still answers from its cache, up to keyCacheMs after it looked the key up.
      assert.strictEqual(keyCacheMs, 5_000)
      yield* TestClock.adjust(keyCacheMs - 1)
      assert.strictEqual((yield* b.authenticate(member.token)).keyId, member.principal.keyId)
      yield* TestClock.adjust(1)
      assert.strictEqual(yield* refused(b, member.token), "Unauthenticated")
      // A process that never saw it refuses it at once.
      const c = yield* process_
      assert.strictEqual(yield* refused(c, member.token), "Unauthenticated")
    }).pipe(Effect.scoped))

  it.effect("lastUsedAt is the time of the last lookup: once per key cache period, not per request", () =>
    Effect.gen(function*() {
      const keys = yield* process_
      const admin = yield* mint(keys, "org_used", "admin")
      const lastUsed = Effect.map(keys.list(admin.principal, {}), (page) => page.data[0]?.lastUsedAt)
      assert.isNull(yield* lastUsed)
      // The layer's tests share one TestClock: times are relative to now.
      const t0 = yield* Clock.currentTimeMillis
      yield* TestClock.adjust(1_000)
      yield* keys.authenticate(admin.token)
      assert.strictEqual(yield* lastUsed, toIso(t0 + 1_000))
      yield* TestClock.adjust(keyCacheMs - 1)
      yield* keys.authenticate(admin.token)
      assert.strictEqual(yield* lastUsed, toIso(t0 + 1_000))
      yield* TestClock.adjust(1)
      yield* keys.authenticate(admin.token)
      assert.strictEqual(yield* lastUsed, toIso(t0 + 1_000 + keyCacheMs))
    }).pipe(Effect.scoped))

  it.effect("seeds: the role follows SVC_API_KEYS; a removed seed is revoked, and valid again once listed again", () =>
    Effect.gen(function*() {
      const token = Redacted.make("sk_unit_seed_key")
      const start = (role: ApiKeyRole | undefined) =>
        Effect.gen(function*() {
          const keys = yield* process_
          const kept = role === undefined ? true : yield* keys.seed(token, "org_seeds", "prod", role)
          yield* keys.revokeRemovedSeeds(role === undefined ? [] : [token])
          return { keys, kept }
        })
      const first = yield* start("admin")
      const seeded = yield* first.keys.authenticate(token)
      assert.deepStrictEqual([seeded.organizationId, seeded.workspaceId, seeded.role], ["org_seeds", "prod", "admin"])
      const demoted = yield* start("member")
      assert.strictEqual((yield* demoted.keys.authenticate(token)).role, "member")
      const removed = yield* start(undefined)
      assert.strictEqual(yield* refused(removed.keys, token), "Unauthenticated")
      const back = yield* start("member")
      assert.isTrue(back.kept)
      assert.strictEqual((yield* back.keys.authenticate(token)).role, "member")
    }).pipe(Effect.scoped))

  it.effect("a seed key revoked through the API stays revoked when a later start lists it again", () =>
    Effect.gen(function*() {
      const keys = yield* process_
      const token = Redacted.make("sk_unit_seed_revoked")
      assert.isTrue(yield* keys.seed(token, "org_seeds2", "prod", "member"))
      const admin = yield* mint(keys, "org_seeds2", "admin")
      const seeded = (yield* keys.list(admin.principal, {})).data.find((k) => k.name === "SVC_API_KEYS")
      assert.isDefined(seeded)
      yield* keys.revoke(admin.principal, seeded!.id)
      const restarted = yield* process_
      assert.isFalse(yield* restarted.seed(token, "org_seeds2", "prod", "member"))
      assert.strictEqual(yield* refused(restarted, token), "Unauthenticated")
    }).pipe(Effect.scoped))

  it.effect("only an admin manages keys, and only its organization's", () =>
    Effect.gen(function*() {
      const keys = yield* process_
      const admin = yield* mint(keys, "org_one", "admin")
      const member = yield* mint(keys, "org_one", "member")
      const otherAdmin = yield* mint(keys, "org_two", "admin")
      const denied = (e: { readonly _tag: string }) => e._tag
      assert.strictEqual(denied(yield* Effect.flip(keys.create(member.principal, { name: "x" }))), "PermissionDenied")
      assert.strictEqual(denied(yield* Effect.flip(keys.list(member.principal, {}))), "PermissionDenied")
      assert.strictEqual(
        denied(yield* Effect.flip(keys.revoke(member.principal, member.principal.keyId))),
        "PermissionDenied"
      )
      // The member's own principal, as the service's internal callers build one, has no role: a member.
      const { role: _role, ...roleless } = admin.principal
      assert.strictEqual(denied(yield* Effect.flip(keys.list(roleless, {}))), "PermissionDenied")
      const cross = yield* Effect.flip(keys.revoke(otherAdmin.principal, member.principal.keyId))
      assert.strictEqual(cross._tag, "PermissionDenied")
      assert.strictEqual((yield* keys.authenticate(member.token)).keyId, member.principal.keyId)
      const listed = yield* keys.list(otherAdmin.principal, {})
      assert.deepStrictEqual(listed.data.map((k) => k.id), [otherAdmin.principal.keyId])
    }).pipe(Effect.scoped))
})

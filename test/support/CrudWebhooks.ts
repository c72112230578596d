/**
 * The cases shared by the resources the service calls with a signed request
 * (tool approval hooks, result handlers): a URL the outbound policy accepts,
 * a write-only signing secret given at registration and replaced with
 * `rotate-secret`, and registrations refused whole. Shared as CrudSuite's
 * cases are, run by each resource's file on its server.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { type Body, type CrudResource, expectCreated, type Refused, type Stored } from "./CrudSuite.ts"
import { expectInvalid } from "./Refusals.ts"
import * as TestServer from "./TestServer.ts"
import { assertNoSecret } from "./WriteOnly.ts"

/** A registration refused: the valid body without `omit` and with `set`. */
export interface Refusal {
  readonly label: string
  readonly omit?: string
  readonly set?: Body
  readonly field: string
  readonly code?: string
}

export interface WebhookResource<A extends Stored, R> extends CrudResource<A, R> {
  /** Every optional field given, each answered as sent. */
  readonly full: Body
  /** Registrations refused whole. */
  readonly refusals: ReadonlyArray<Refusal>
  /** `rotate-secret` bodies refused, each changing nothing. */
  readonly refusedRotations: ReadonlyArray<Refused>
}

export const crudWebhooks = <A extends Stored & { readonly url: string }, R>(
  it: Vitest.MethodsNonLive<R | TestServer.TestApi>,
  resource: WebhookResource<A, R>
) => {
  const { collection } = resource
  const { expectOk, nowIso } = TestServer
  const create = (overrides: Body) => Effect.flatMap(resource.body(overrides), (b) => collection.create(b))

  it.effect("POST echoes every field it is given and never the secret", () =>
    Effect.gen(function*() {
      const body = yield* resource.body(resource.full)
      const { reply } = yield* expectCreated(resource, body)
      assertNoSecret(reply, String(body["secret"]))
    }))

  it.effect.each(resource.refusals)(
    "POST refuses $label with 400 on its field, and registers nothing",
    (refusal) =>
      Effect.gen(function*() {
        const before = yield* collection.ids()
        const body = yield* resource.body(refusal.set)
        const refused = Object.fromEntries(Object.entries(body).filter(([field]) => field !== refusal.omit))
        yield* expectInvalid(yield* collection.post(refused), refusal.field, refusal.code)
        assert.deepStrictEqual(yield* collection.ids(), before, "nothing was registered")
      })
  )

  it.effect("with private URLs allowed (the test configuration) loopback http URLs register; a non-URL or another scheme does not", () =>
    Effect.gen(function*() {
      for (const url of ["http://127.0.0.1:4000/x", "http://localhost:4000/a"]) {
        assert.strictEqual((yield* create({ url })).url, url)
      }
      for (const url of ["not a url", "ftp://127.0.0.1/x"]) {
        yield* expectInvalid(yield* collection.post(yield* resource.body({ url })), "url", "url_not_allowed")
      }
      const created = yield* create({})
      yield* expectInvalid(yield* collection.patch(created.id, { url: "not a url" }), "url", "url_not_allowed")
    }))

  it.effect("rotate-secret bumps configVersion and never returns the secret; a refused rotation changes nothing", () =>
    Effect.gen(function*() {
      const created = yield* create({ secret: "secret-before-rotation" })
      yield* TestClock.adjust("3 seconds")
      const now = yield* nowIso
      const reply = yield* collection.action(created.id, "rotate-secret", { secret: "secret-after-rotation" })
      const rotated = yield* expectOk(reply, 200, collection.schema)
      assert.deepStrictEqual(reply.json, { ...created, configVersion: created.configVersion + 1, updatedAt: now })
      assertNoSecret(reply, "secret-before-rotation", "secret-after-rotation")
      assert.deepStrictEqual((yield* collection.get(created.id)).json, reply.json)

      for (const refusal of resource.refusedRotations) {
        const refused = yield* collection.action(created.id, "rotate-secret", refusal.body)
        yield* expectInvalid(refused, refusal.field, refusal.code)
      }
      assert.deepStrictEqual(yield* collection.read(created.id), rotated, "a refused rotation changes nothing")
    }))

  it.effect("a signing secret under 16 bytes of UTF-8 is refused on registration and rotation; 16 bytes are enough", () =>
    Effect.gen(function*() {
      const before = yield* collection.ids()
      // 15 ASCII characters; 7 two-byte characters (14 bytes, where characters would count 7).
      for (const secret of ["whsec_15_bytes_", "é".repeat(7)]) {
        const refused = yield* expectInvalid(yield* collection.post(yield* resource.body({ secret })), "secret")
        assert.include(refused.message, "at least 16 bytes (UTF-8)")
      }
      assert.deepStrictEqual(yield* collection.ids(), before, "nothing was registered")
      // 8 two-byte characters are 16 bytes.
      const created = yield* create({ secret: "é".repeat(8) })
      for (const secret of ["whsec_15_bytes_", "é".repeat(7)]) {
        yield* expectInvalid(yield* collection.action(created.id, "rotate-secret", { secret }), "secret")
      }
      assert.deepStrictEqual(yield* collection.read(created.id), created, "a refused rotation changes nothing")
      yield* expectOk(
        yield* collection.action(created.id, "rotate-secret", { secret: "0123456789abcdef" }),
        200,
        collection.schema
      )
    }))
}

/**
 * The CRUD cases every registered resource of the API shares (tool servers,
 * HTTP connections, tool approval hooks, result handlers), written once and
 * run by each resource's own test file on its server: the create answer with
 * its defaults, lists and pages, PATCH and configVersion, requestTimeoutMs,
 * delete and the agents' references that refuse it, and the 404 and 403
 * tables over every route that addresses one. A resource's own rules stay in
 * its file; tool adapters add CrudAdapters, signed webhooks CrudWebhooks.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Deleted, Page, type PageOf } from "../../domain/Page.ts"
import * as Collection from "./Collection.ts"
import { byOtherTenants, call, expectDenied, expectInvalid, expectNotFound, type IdRoute } from "./Refusals.ts"
import * as TestServer from "./TestServer.ts"
import { assertNoSecret } from "./WriteOnly.ts"

/** What every such resource answers. */
export interface Stored {
  readonly id: string
  readonly metadata: Readonly<Record<string, string>>
  readonly configVersion: number
  readonly requestTimeoutMs: number
  readonly createdAt: string
  readonly updatedAt: string
}

export type Body = Record<string, unknown>

/** A body refused with 400 on `field` (`code` unless invalid_request_error). */
export interface Refused {
  readonly body: Body
  readonly field: string
  readonly code?: string
}

export interface CrudResource<A extends Stored, R> {
  readonly collection: Collection.Collection<A>
  /** Its `object` (`tool_server`), also that of its delete answer. */
  readonly object: string
  readonly idPattern: RegExp
  /** A 404 on an id that does not exist: its code (`tool_server_not_found`) and such an id. */
  readonly notFound: { readonly code: string; readonly id: string }
  /** Every route that addresses one by id. */
  readonly routes: ReadonlyArray<IdRoute>
  /** A valid registration body (names fresh where they must be unique), with `overrides` on top. */
  readonly body: (overrides?: Body) => Effect.Effect<Body, never, R>
  /** What a create of `body` answers beyond id, object, metadata ({} unless given), configVersion and timestamps. */
  readonly answer: (body: Body) => Body
  readonly requestTimeout: { readonly default: number; readonly max: number }
  readonly update: {
    /** Structural fields changed at once, each answered as sent. */
    readonly all: Body
    /** One structural field alone. */
    readonly one: Body
    /** A patch refused, changing nothing. */
    readonly refused: Refused
  }
  readonly versions: {
    /** A patch that repeats what `body` registered: no new configVersion. */
    readonly noop: (body: Body) => Body
    /** Patches that each change one structural field: a new configVersion each. */
    readonly steps: ReadonlyArray<Body>
  }
  /** Two agents' bodies that reference the resource, and the agent patch that drops the reference. */
  readonly references: {
    readonly agents: readonly [(id: string) => Body, (id: string) => Body]
    readonly drop: Body
  }
  /** How many calls the resource's peer received: a call refused to another tenant makes none. */
  readonly sent?: Effect.Effect<number, never, R>
}

/** Registers `body`: 200 with the resource as `answer` says, new (configVersion 1, updated when created). */
export const expectCreated = <A extends Stored, R>(resource: CrudResource<A, R>, body: Body) =>
  Effect.gen(function*() {
    const reply = yield* resource.collection.post(body)
    const created = yield* TestServer.expectOk(reply, 200, resource.collection.schema)
    assert.deepStrictEqual(reply.json, {
      id: created.id,
      object: resource.object,
      metadata: {},
      ...resource.answer(body),
      configVersion: 1,
      createdAt: created.createdAt,
      updatedAt: created.createdAt
    })
    return { created, reply }
  })

/** The shared cases, on the suite's server. */
export const crudSuite = <A extends Stored, R>(
  it: Vitest.MethodsNonLive<R | TestServer.TestApi>,
  resource: CrudResource<A, R>
) => {
  const { collection, object } = resource
  const { Keys, expectError, expectOk, nowIso, request } = TestServer
  const PageOfA: Schema.Decoder<PageOf<A>> = Page(collection.schema)
  const create = (overrides?: Body, key?: string) =>
    Effect.flatMap(resource.body(overrides), (body) => collection.create(body, key))
  const secretOf = (body: Body) => (typeof body["secret"] === "string" ? [body["secret"]] : [])

  it.effect("POST answers 200 with every optional field resolved to its default", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 second")
      const now = yield* nowIso
      const body = yield* resource.body()
      const { created, reply } = yield* expectCreated(resource, body)
      assert.strictEqual(created.createdAt, now)
      assert.match(created.id, resource.idPattern)
      assert.match(reply.headers.get("x-request-id") ?? "", /^req_/)
      assertNoSecret(reply, ...secretOf(body))
      const read = yield* collection.get(created.id)
      assert.strictEqual(read.status, 200)
      assert.deepStrictEqual(read.json, reply.json)
      assertNoSecret(read, ...secretOf(body))
    }))

  // Key c's workspace holds none of the resource until this case: it runs first of those that create there.
  it.effect("GET lists the workspace's resources in pages of limit, with a cursor", () =>
    Effect.gen(function*() {
      const key = Keys.c
      const body = yield* resource.body()
      const created = [yield* create({}, key), yield* create({}, key), yield* create({}, key)]
      const first = yield* expectOk(yield* request("GET", `${collection.path}?limit=2`, { key }), 200, PageOfA)
      assert.strictEqual(first.object, "list")
      assert.strictEqual(first.limit, 2)
      assert.strictEqual(first.data.length, 2)
      assert.isTrue(first.hasMore)
      assert.isString(first.nextCursor)
      const second = yield* expectOk(
        yield* request("GET", `${collection.path}?limit=2&cursor=${encodeURIComponent(first.nextCursor ?? "")}`, {
          key
        }),
        200,
        PageOfA
      )
      assert.strictEqual(second.data.length, 1)
      assert.isFalse(second.hasMore)
      assert.isNull(second.nextCursor)
      const all = [...first.data, ...second.data]
      assert.sameMembers(all.map((r) => r.id), created.map((r) => r.id))
      assert.deepStrictEqual(all.find((r) => r.id === created[1].id), created[1])
      assertNoSecret(yield* request("GET", collection.path, { key }), ...secretOf(body))
    }))

  it.effect("list shows the caller's workspace only", () =>
    Effect.gen(function*() {
      const mine = yield* create()
      yield* create()
      const theirs = yield* create({}, Keys.b)
      const pageA = yield* expectOk(yield* request("GET", `${collection.path}?limit=100`), 200, PageOfA)
      assert.strictEqual(pageA.object, "list")
      assert.isTrue(pageA.data.some((r) => r.id === mine.id))
      assert.isFalse(pageA.data.some((r) => r.id === theirs.id))
      const pageB = yield* expectOk(
        yield* request("GET", `${collection.path}?limit=100`, { key: Keys.b }),
        200,
        PageOfA
      )
      assert.isTrue(pageB.data.some((r) => r.id === theirs.id))
      assert.isFalse(pageB.data.some((r) => r.id === mine.id))
      const first = yield* expectOk(yield* request("GET", `${collection.path}?limit=1`), 200, PageOfA)
      assert.strictEqual(first.data.length, 1)
      assert.strictEqual(first.limit, 1)
      assert.isTrue(first.hasMore)
      assert.isString(first.nextCursor)
    }))

  it.effect("PATCH changes structural fields, merges metadata and bumps configVersion; empty and refused patches change nothing", () =>
    Effect.gen(function*() {
      const body = yield* resource.body({ metadata: { a: "1", b: "2" } })
      const created = yield* collection.create(body)
      yield* TestClock.adjust("2 seconds")
      const now = yield* nowIso
      const reply = yield* collection.patch(created.id, { ...resource.update.all, metadata: { a: null, c: "3" } })
      const patched = yield* expectOk(reply, 200, collection.schema)
      assert.deepStrictEqual(reply.json, {
        ...created,
        ...resource.update.all,
        metadata: { b: "2", c: "3" },
        configVersion: created.configVersion + 1,
        updatedAt: now
      })
      assertNoSecret(reply, ...secretOf(body))
      assert.deepStrictEqual((yield* collection.get(created.id)).json, reply.json)

      const empty = yield* collection.update(created.id, {})
      assert.deepStrictEqual(empty, patched)
      const again = yield* collection.update(created.id, resource.update.one)
      assert.deepStrictEqual(again, { ...patched, ...resource.update.one, configVersion: patched.configVersion + 1 })

      const { body: refused, code, field } = resource.update.refused
      yield* expectInvalid(yield* collection.patch(created.id, refused), field, code)
      assert.deepStrictEqual(yield* collection.read(created.id), again)
    }))

  it.effect("configVersion increments on structural changes, not on metadata-only or no-op updates", () =>
    Effect.gen(function*() {
      const body = yield* resource.body({ metadata: { a: "1" } })
      const created = yield* collection.create(body)
      assert.strictEqual(created.configVersion, 1)
      const meta = yield* collection.update(created.id, { metadata: { b: "2", a: null } })
      assert.deepStrictEqual(meta.metadata, { b: "2" })
      assert.strictEqual(meta.configVersion, 1)
      const noop = yield* collection.update(created.id, resource.versions.noop(body))
      assert.strictEqual(noop.configVersion, 1)
      let version = 1
      for (const step of resource.versions.steps) {
        version += 1
        assert.strictEqual((yield* collection.update(created.id, step)).configVersion, version, JSON.stringify(step))
      }
      const final = yield* collection.update(created.id, { metadata: { c: "3" } })
      assert.strictEqual(final.configVersion, version)
      assert.deepStrictEqual(final.metadata, { b: "2", c: "3" })
      assert.deepStrictEqual(yield* collection.read(created.id), final)
    }))

  const { default: defaultMs, max } = resource.requestTimeout
  it.effect(`requestTimeoutMs is an integer from 1 to ${max}; absent or null it is ${defaultMs}`, () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* create({ requestTimeoutMs: max })).requestTimeoutMs, max)
      assert.strictEqual((yield* create({ requestTimeoutMs: null })).requestTimeoutMs, defaultMs)
      assert.strictEqual((yield* create({ requestTimeoutMs: 1 })).requestTimeoutMs, 1)
      for (const requestTimeoutMs of [0, -1, 1.5, "1000", max + 1, 10_000_000]) {
        const reply = yield* collection.post(yield* resource.body({ requestTimeoutMs }))
        yield* expectInvalid(reply, "requestTimeoutMs")
      }
      const created = yield* create({ requestTimeoutMs: 1_000 })
      yield* expectInvalid(yield* collection.patch(created.id, { requestTimeoutMs: max + 1 }), "requestTimeoutMs")
      assert.strictEqual((yield* collection.update(created.id, { requestTimeoutMs: max })).requestTimeoutMs, max)
      const reset = yield* collection.update(created.id, { requestTimeoutMs: null })
      assert.strictEqual(reset.requestTimeoutMs, defaultMs)
    }))

  it.effect("DELETE answers { id, object, deleted }; the resource is gone from reads and lists", () =>
    Effect.gen(function*() {
      const created = yield* create()
      const reply = yield* collection.del(created.id)
      yield* expectOk(reply, 200, Deleted(object))
      assert.deepStrictEqual(reply.json, { id: created.id, object, deleted: true })
      yield* expectNotFound(yield* collection.get(created.id), resource.notFound.code)
      yield* expectNotFound(yield* collection.del(created.id), resource.notFound.code)
      assert.notInclude(yield* collection.ids(), created.id)
    }))

  it.effect("DELETE while agents reference it is 409 resource_in_use naming them; it goes once none does", () =>
    Effect.gen(function*() {
      const created = yield* create()
      const [firstBody, secondBody] = resource.references.agents
      const first = yield* Collection.agents.create(firstBody(created.id))
      const second = yield* Collection.agents.create(secondBody(created.id))
      const both = yield* expectError(yield* collection.del(created.id), 409, "api_error", "resource_in_use")
      assert.deepStrictEqual(Object.keys(both.details ?? {}), ["inUseByAgentIds"])
      const ids = yield* Schema.decodeUnknownEffect(Schema.Array(Schema.String))(both.details?.["inUseByAgentIds"])
        .pipe(Effect.orDie)
      assert.sameMembers([...ids], [first.id, second.id])
      assert.deepStrictEqual(yield* collection.read(created.id), created)

      yield* Collection.agents.update(first.id, resource.references.drop)
      const one = yield* expectError(yield* collection.del(created.id), 409, "api_error", "resource_in_use")
      assert.deepStrictEqual(one.details, { inUseByAgentIds: [second.id] })

      yield* expectOk(yield* Collection.agents.del(second.id), 200, Deleted("agent"))
      const deleted = yield* expectOk(yield* collection.del(created.id), 200, Deleted(object))
      assert.deepStrictEqual(deleted, { id: created.id, object, deleted: true })
      yield* expectNotFound(yield* collection.get(created.id), resource.notFound.code)
    }))

  it.effect.each(resource.routes)(
    `an unknown id is 404 ${resource.notFound.code}: $label`,
    (route) =>
      Effect.gen(function*() {
        yield* expectNotFound(yield* call(route, resource.notFound.id), resource.notFound.code)
      })
  )

  it.effect.each(byOtherTenants(resource.routes))(
    "another workspace's resource is 403 permission_denied, absent from its list and untouched: $label",
    ({ route, tenant }) =>
      Effect.gen(function*() {
        const created = yield* create()
        const { sent } = resource
        const sentBefore = sent === undefined ? null : yield* sent
        yield* expectDenied(yield* call(route, created.id, tenant.key))
        assert.notInclude(yield* collection.ids(tenant.key), created.id)
        if (sent !== undefined) assert.strictEqual(yield* sent, sentBefore, "no call to the peer for another tenant")
        assert.deepStrictEqual(yield* collection.read(created.id), created)
      })
  )
}

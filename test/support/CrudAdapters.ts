/**
 * The tool adapters a model sees by name (tool servers, HTTP connections):
 * one shape for their CrudSuite description (the tool policy fields they
 * share, the `test` action, agents' capabilities that reference them), and
 * their name rules, and what their `test` route answers. A name goes into
 * every model-facing tool name (`mcp__{server}__{tool}`), so it is a slug of
 * 1 to 56 of [A-Za-z0-9_-] without '__', unique per organization on create
 * and on rename.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Effect, type Schema } from "effect"
import { Deleted } from "../../domain/Page.ts"
import * as Collection from "./Collection.ts"
import type { Body, CrudResource, Stored } from "./CrudSuite.ts"
import { expectInvalid, resourceRoutes } from "./Refusals.ts"
import * as TestServer from "./TestServer.ts"

/** What a registration answers for each tool policy field it leaves out. */
const policyDefaults = {
  auth: { type: "none" },
  approval: null,
  gatedTools: null,
  resultCapBytes: 100_000,
  trusted: false,
  defer: null,
  requiredSkills: null,
  enabled: true,
  requestTimeoutMs: 60_000
}

export interface Adapter<A extends Stored> extends Pick<CrudResource<A, never>, "update" | "versions"> {
  readonly collection: Collection.Collection<A>
  readonly object: string
  /** Of its ids: `ts` for `ts_...`. */
  readonly idPrefix: string
  /** The smallest registration named `name`. */
  readonly minimal: (name: string) => Body
  /** What a registration answers for the adapter's own optional fields it leaves out. */
  readonly defaults: Body
  /** An agent's capabilities that offer the adapter's tools. */
  readonly offeredBy: (id: string) => Body
}

/** The CrudSuite description of a tool adapter. */
export const adapterResource = <A extends Stored>(adapter: Adapter<A>): CrudResource<A, never> => ({
  collection: adapter.collection,
  object: adapter.object,
  idPattern: new RegExp(`^${adapter.idPrefix}_[0-9A-Za-z]+$`),
  notFound: { code: `${adapter.object}_not_found`, id: `${adapter.idPrefix}_doesnotexist` },
  routes: resourceRoutes(adapter.collection.path, { enabled: false }, [["test"]]),
  body: (overrides) => Effect.succeed({ ...adapter.minimal(Collection.uniqueName("crud")), ...overrides }),
  answer: (body) => ({ ...policyDefaults, ...adapter.defaults, ...body }),
  requestTimeout: { default: 60_000, max: 600_000 },
  update: adapter.update,
  versions: adapter.versions,
  references: {
    agents: [(id) => ({ capabilities: adapter.offeredBy(id) }), (id) => ({ capabilities: adapter.offeredBy(id) })],
    drop: { capabilities: {} }
  }
})

export const crudNames = <A extends Stored & { readonly name: string }, R>(
  it: Vitest.MethodsNonLive<R | TestServer.TestApi>,
  resource: CrudResource<A, R>
) => {
  const { collection, object } = resource
  const { Keys, expectError, expectOk } = TestServer
  const post = (name: string, key?: string) => Effect.flatMap(resource.body({ name }), (b) => collection.post(b, key))
  const create = (name: string, key?: string) =>
    Effect.flatMap(resource.body({ name }), (b) => collection.create(b, key))
  const expectConflict = (reply: TestServer.Reply) => expectError(reply, 409, "api_error", "name_conflict")

  it.effect("names are slugs of 1 to 56 of [A-Za-z0-9_-] without '__'", () =>
    Effect.gen(function*() {
      for (const name of ["", "x".repeat(57), "a__b", "__", "has space", "dot.name", "slash/name", "ümlaut", "tab\t"]) {
        yield* expectInvalid(yield* post(name), "name")
      }
      const { name: _name, ...nameless } = yield* resource.body()
      yield* expectInvalid(yield* collection.post(nameless), "name")
      for (const name of ["n".repeat(56), "A-b_9", "_lead", "trail-", "a_b-c", "7"]) {
        assert.strictEqual((yield* create(name)).name, name)
      }
      const renamed = yield* create("rename-me")
      yield* expectInvalid(yield* collection.patch(renamed.id, { name: "x__y" }), "name")
      yield* expectInvalid(yield* collection.patch(renamed.id, { name: "y".repeat(57) }), "name")
    }))

  it.effect("names are unique per organization on create and rename, free in another organization", () =>
    Effect.gen(function*() {
      const first = yield* create("shared-name")
      const again = yield* expectConflict(yield* post("shared-name"))
      assert.strictEqual(again.details?.["field"], "name")
      // Key b: same organization, other workspace.
      yield* expectConflict(yield* post("shared-name", Keys.b))
      // Key c: another organization.
      const elsewhere = yield* create("shared-name", Keys.c)
      assert.notStrictEqual(elsewhere.id, first.id)

      const second = yield* create("second-name")
      yield* expectConflict(yield* collection.patch(second.id, { name: "shared-name" }))
      const inB = yield* create("name-in-b", Keys.b)
      yield* expectConflict(yield* collection.patch(second.id, { name: "name-in-b" }))
      assert.strictEqual((yield* collection.read(second.id)).name, "second-name")
      // Renaming to its own name is no conflict and no change; a freed name can be reused.
      const same = yield* collection.update(second.id, { name: "second-name" })
      assert.strictEqual(same.configVersion, 1)
      yield* expectOk(yield* collection.del(inB.id, Keys.b), 200, Deleted(object))
      const taken = yield* collection.update(second.id, { name: "name-in-b" })
      assert.strictEqual(taken.name, "name-in-b")
      assert.strictEqual(taken.configVersion, 2)
      const reused = yield* create("second-name")
      assert.strictEqual(reused.name, "second-name")
    }))
}

/** What an adapter's `test` route answers, its count of tools aside. */
export interface TestAnswer {
  readonly connected: boolean
  readonly latencyMs: number
  readonly tools: ReadonlyArray<{ readonly name: string; readonly namespacedName: string }>
}

/**
 * An adapter's `test` route: the call itself, the call answered 200 and
 * decoded, and the check of a whole answer: connected, a latency, exactly
 * `names` in order as `{namespace}__{adapter}__{name}`, and as many counted.
 */
export const testRoute = <T extends TestAnswer>(
  collection: Collection.Collection<unknown>,
  schema: Schema.Decoder<T>,
  count: (answer: T) => number,
  namespace: "mcp" | "api"
) => {
  const test = (id: string, key?: string) => collection.action(id, "test", undefined, key)
  return {
    test,
    testOk: (id: string) => Effect.flatMap(test(id), (reply) => TestServer.expectOk(reply, 200, schema)),
    assertTested: (result: T, adapter: string, names: ReadonlyArray<string>) => {
      assert.strictEqual(result.connected, true)
      assert.isAtLeast(result.latencyMs, 0)
      assert.deepStrictEqual(
        result.tools,
        names.map((name) => ({ name, namespacedName: `${namespace}__${adapter}__${name}` }))
      )
      assert.strictEqual(count(result), names.length)
    }
  }
}

/**
 * Listing secrets (spec 4.9, 5.6), on a fresh database: newest first in pages
 * of `limit` with a cursor, the caller's workspace only, no value in any page,
 * and the `name` and `metadata[key]` filters.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Secret } from "../../domain/Secret.ts"
import * as Collection from "../support/Collection.ts"
import { expectInvalid } from "../support/Refusals.ts"
import { SecretPage } from "../support/Secrets.ts"
import * as TestServer from "../support/TestServer.ts"
import { assertNoValue } from "../support/WriteOnly.ts"

const { Keys, request } = TestServer
const { create: createSecret } = Collection.secrets

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

/**
 * Browser profiles' routes (issue 30): PUT creates or replaces and answers the
 * profile without its contents, GET lists the workspace's profiles (never the
 * contents, never another workspace's), DELETE removes; another workspace's
 * profile is 404 `browser_profile_not_found`; a body that is not Playwright's
 * storage state is 400 naming the field.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { BrowserProfile } from "../../domain/BrowserProfile.ts"
import { Page } from "../../domain/Page.ts"
import { expectInvalid, expectNotFound } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"
import { assertNoValue } from "../support/WriteOnly.ts"

const { Keys, request } = TestServer
const ProfilePage = Page(BrowserProfile)

const cookie = (value: string) => ({
  name: "session",
  value,
  domain: "127.0.0.1",
  path: "/",
  expires: -1,
  httpOnly: true,
  secure: false,
  sameSite: "Lax"
})
const state = (value: string) => ({
  storageState: {
    cookies: [cookie(value)],
    origins: [{ origin: "http://127.0.0.1:8080", localStorage: [{ name: "token", value: `ls-${value}` }] }]
  }
})

TestServer.suite()("browser profiles", (it) => {
  it.effect("PUT creates then replaces, write-only; GET lists the workspace's; DELETE removes", () =>
    Effect.gen(function*() {
      const created = yield* request("PUT", "/v1/browser-profiles/crm-login", { body: state("first-cookie-value") })
      assert.strictEqual(created.status, 200, created.text)
      const t0 = yield* TestServer.nowIso
      assert.deepStrictEqual(created.json, {
        profileKey: "crm-login",
        object: "browser_profile",
        createdAt: t0,
        updatedAt: t0
      })
      assertNoValue(created, "first-cookie-value", "ls-first-cookie-value")

      yield* TestClock.adjust("1 second")
      const replaced = yield* request("PUT", "/v1/browser-profiles/crm-login", { body: state("second-value") })
      const t1 = yield* TestServer.nowIso
      assert.strictEqual(replaced.status, 200, replaced.text)
      assert.deepStrictEqual(replaced.json, {
        profileKey: "crm-login",
        object: "browser_profile",
        createdAt: t0,
        updatedAt: t1
      })
      assertNoValue(replaced, "second-value")

      yield* TestClock.adjust("1 second")
      yield* request("PUT", "/v1/browser-profiles/wiki", { body: state("wiki-value") })
      const t2 = yield* TestServer.nowIso
      // Another workspace's profile of the same key is its own.
      const other = yield* request("PUT", "/v1/browser-profiles/crm-login", { body: state("b-value"), key: Keys.b })
      assert.strictEqual(other.status, 200, other.text)

      const list = yield* request("GET", "/v1/browser-profiles")
      assert.strictEqual(list.status, 200)
      assert.deepStrictEqual(list.json, {
        object: "list",
        data: [
          { profileKey: "wiki", object: "browser_profile", createdAt: t2, updatedAt: t2 },
          { profileKey: "crm-login", object: "browser_profile", createdAt: t0, updatedAt: t1 }
        ],
        hasMore: false,
        nextCursor: null,
        limit: 20
      })
      assertNoValue(list, "second-value", "wiki-value", "b-value")

      const first = yield* request("GET", "/v1/browser-profiles?limit=1")
      const page = yield* TestServer.expectOk(first, 200, ProfilePage)
      assert.isTrue(page.hasMore)
      const second = yield* request(
        "GET",
        `/v1/browser-profiles?limit=1&cursor=${encodeURIComponent(page.nextCursor ?? "")}`
      )
      assert.deepStrictEqual(second.json, {
        object: "list",
        data: [{ profileKey: "crm-login", object: "browser_profile", createdAt: t0, updatedAt: t1 }],
        hasMore: false,
        nextCursor: null,
        limit: 1
      })

      const deleted = yield* request("DELETE", "/v1/browser-profiles/wiki")
      assert.strictEqual(deleted.status, 200)
      assert.deepStrictEqual(deleted.json, { id: "wiki", object: "browser_profile", deleted: true })
      yield* expectNotFound(yield* request("DELETE", "/v1/browser-profiles/wiki"), "browser_profile_not_found")
    }))

  it.effect("another workspace's profile is not found; it stays unchanged", () =>
    Effect.gen(function*() {
      yield* request("PUT", "/v1/browser-profiles/only-a", { body: state("a-only") })
      yield* expectNotFound(
        yield* request("DELETE", "/v1/browser-profiles/only-a", { key: Keys.b }),
        "browser_profile_not_found"
      )
      yield* expectNotFound(
        yield* request("DELETE", "/v1/browser-profiles/only-a", { key: Keys.c }),
        "browser_profile_not_found"
      )
      const forC = yield* TestServer.expectOk(
        yield* request("GET", "/v1/browser-profiles", { key: Keys.c }),
        200,
        ProfilePage
      )
      assert.deepStrictEqual(forC.data, [])
      const mine = yield* request("GET", "/v1/browser-profiles")
      assert.include(mine.text, "\"only-a\"")
    }))

  it.effect("a body that is not a storage state, or a bad key, is 400", () =>
    Effect.gen(function*() {
      yield* expectInvalid(
        yield* request("PUT", "/v1/browser-profiles/x", { body: { storageState: { cookies: [] } } }),
        "storageState.origins"
      )
      yield* expectInvalid(
        yield* request("PUT", "/v1/browser-profiles/x", {
          body: { storageState: { cookies: [{ ...cookie("v"), sameSite: "Sometimes" }], origins: [] } }
        }),
        "storageState.cookies[0].sameSite"
      )
      yield* expectInvalid(
        yield* request("PUT", "/v1/browser-profiles/-bad", { body: state("v") }),
        "profileKey"
      )
      const list = yield* request("GET", "/v1/browser-profiles")
      assert.notInclude(list.text, "\"x\"")
    }))
})

import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Deleted, Page } from "../../domain/Page.ts"
import { Thread, ThreadCreated } from "../../domain/Thread.ts"
import * as Collection from "../support/Collection.ts"
import {
  byOtherTenants,
  call,
  expectDenied,
  expectInvalid,
  expectNotFound,
  type IdRoute,
  idRoute,
  resourceRoutes
} from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

const ThreadPage = Page(Thread)
const ThreadDeleted = Deleted("thread")
const AgentDeleted = Deleted("agent")

const { create: createAgent } = Collection.agents
const { create: createThread, read: getThread, update: patchThread } = Collection.threads

/** Every route that addresses a thread by id. */
const threadRoutes = [
  ...resourceRoutes(Collection.threads.path, { metadata: { x: "y" } }),
  idRoute("GET", (id) => `${Collection.threads.path}/${id}/messages`),
  idRoute("GET", (id) => `${Collection.threads.path}/${id}/messages?warm=1`),
  idRoute("GET", (id) => `${Collection.threads.path}/${id}/workspace/files`),
  idRoute("GET", (id) => `${Collection.threads.path}/${id}/workspace/files/content?path=a.txt`)
]

/** The thread routes that address an agent by id. */
const agentRoutes: ReadonlyArray<IdRoute> = [
  { label: "POST /v1/threads", method: "POST", path: () => "/v1/threads", body: (agentId) => ({ agentId }) },
  { label: "GET /v1/threads?agentId=", method: "GET", path: (agentId) => `/v1/threads?agentId=${agentId}` }
]

const hasKey = (json: unknown, key: string): boolean => typeof json === "object" && json !== null && key in json

const withoutCreated = ({ created: _created, ...thread }: ThreadCreated): Thread => thread

const isoFromMillis = (millis: number) => new Date(millis).toISOString()

const nowMillis = TestClock.testClockWith((clock) => Effect.sync(() => clock.currentTimeMillisUnsafe()))

TestServer.suite()("threads", (it) => {
  // ---- create -----------------------------------------------------------------

  it.effect("POST /v1/threads creates an idle thread with defaults (201, created: true)", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent({ context: "agent context" })
      const now = yield* nowMillis
      const reply = yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id } })
      const created = yield* TestServer.expectOk(reply, 201, ThreadCreated)
      assert.match(created.id, /^thread_[0-9A-Za-z]+$/)
      assert.deepStrictEqual(created, {
        id: created.id,
        object: "thread",
        agentId: agent.id,
        context: [],
        band: null,
        dataHandling: null,
        timeZone: null,
        status: "idle",
        workspace: null,
        metadata: {},
        createdAt: isoFromMillis(now),
        updatedAt: isoFromMillis(now),
        created: true
      })
      // The wire body carries exactly these keys.
      assert.deepStrictEqual(reply.json, created)

      const readReply = yield* api.request("GET", `/v1/threads/${created.id}`)
      const read = yield* TestServer.expectOk(readReply, 200, Thread)
      assert.deepStrictEqual(read, withoutCreated(created))
      assert.isFalse(hasKey(readReply.json, "created"))
    }))

  it.effect("POST /v1/threads accepts every optional field", () =>
    Effect.gen(function*() {
      const agent = yield* createAgent()
      const created = yield* createThread({
        agentId: agent.id,
        context: [{ id: "rules", content: "be brief" }, { content: "second block" }],
        band: "lite",
        dataHandling: "strict",
        timeZone: "Europe/Paris",
        metadata: { customer: "c_1", tier: "gold" }
      })
      assert.deepStrictEqual(created.context, [{ id: "rules", content: "be brief" }, { content: "second block" }])
      assert.strictEqual(created.band, "lite")
      assert.strictEqual(created.dataHandling, "strict")
      assert.strictEqual(created.timeZone, "Europe/Paris")
      assert.deepStrictEqual(created.metadata, { customer: "c_1", tier: "gold" })
      assert.strictEqual(created.status, "idle")
      assert.isTrue(created.created)
      assert.deepStrictEqual(yield* getThread(created.id), withoutCreated(created))
    }))

  it.effect("explicit nulls for dataHandling and timeZone are accepted", () =>
    Effect.gen(function*() {
      const agent = yield* createAgent()
      const created = yield* createThread({ agentId: agent.id, dataHandling: null, timeZone: null })
      assert.isNull(created.dataHandling)
      assert.isNull(created.timeZone)
    }))

  it.effect("workspace is { status: 'uninitialized' } only when the agent has a managed workspace", () =>
    Effect.gen(function*() {
      const managed = yield* createAgent({ workspace: { type: "managed" } })
      const none = yield* createAgent()
      const onManaged = yield* createThread({ agentId: managed.id })
      assert.deepStrictEqual(onManaged.workspace, { status: "uninitialized" })
      assert.deepStrictEqual((yield* getThread(onManaged.id)).workspace, { status: "uninitialized" })
      assert.isNull((yield* createThread({ agentId: none.id })).workspace)
    }))

  it.effect("agentId is required", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      yield* expectInvalid(yield* api.request("POST", "/v1/threads", { body: {} }), "agentId")
      yield* expectInvalid(yield* api.request("POST", "/v1/threads", { body: { context: "hi" } }), "agentId")
    }))

  it.effect("unknown body fields are rejected", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const error = yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, forceRefresh: true } }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      assert.strictEqual(error.details?.["field"], "forceRefresh")
    }))

  it.effect.each(agentRoutes)("an unknown agent is 404 agent_not_found: $label", (route) =>
    Effect.gen(function*() {
      yield* expectNotFound(yield* call(route, "agent_doesnotexist"), "agent_not_found")
    }))

  it.effect.each(byOtherTenants(agentRoutes))(
    "an agent of another workspace is 403 permission_denied, either way: $label",
    ({ route, tenant }) =>
      Effect.gen(function*() {
        const theirs = yield* createAgent({}, tenant.key)
        // The owner's own key works.
        const own = yield* createThread({ agentId: theirs.id }, tenant.key)
        assert.strictEqual(own.agentId, theirs.id)
        yield* expectDenied(yield* call(route, theirs.id))
        const mine = yield* createAgent()
        yield* createThread({ agentId: mine.id })
        yield* expectDenied(yield* call(route, mine.id, tenant.key))
      })
  )

  // ---- timeZone -------------------------------------------------------------

  it.effect("timeZone must be an IANA zone", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      yield* expectInvalid(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, timeZone: "Mars/Base" } }),
        "timeZone"
      )
      yield* expectInvalid(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, timeZone: "" } }),
        "timeZone"
      )
      yield* expectInvalid(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, timeZone: 2 } }),
        "timeZone"
      )
      const tokyo = yield* createThread({ agentId: agent.id, timeZone: "Asia/Tokyo" })
      assert.strictEqual(tokyo.timeZone, "Asia/Tokyo")
    }))

  it.effect("a UTC offset is not an IANA zone name", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      yield* expectInvalid(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, timeZone: "+02:00" } }),
        "timeZone"
      )
    }))

  it.effect("PATCH timeZone validates, sets and clears", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const thread = yield* createThread({ agentId: agent.id })
      yield* expectInvalid(
        yield* api.request("PATCH", `/v1/threads/${thread.id}`, { body: { timeZone: "Mars/Base" } }),
        "timeZone"
      )
      assert.isNull((yield* getThread(thread.id)).timeZone)
      assert.strictEqual((yield* patchThread(thread.id, { timeZone: "Europe/Paris" })).timeZone, "Europe/Paris")
      // Omitted: unchanged.
      assert.strictEqual((yield* patchThread(thread.id, { metadata: { a: "1" } })).timeZone, "Europe/Paris")
      assert.isNull((yield* patchThread(thread.id, { timeZone: null })).timeZone)
      assert.isNull((yield* getThread(thread.id)).timeZone)
    }))

  // ---- dataHandling -----------------------------------------------------------

  it.effect("dataHandling accepts only 'strict' or null", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      yield* expectInvalid(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, dataHandling: "standard" } }),
        "dataHandling"
      )
      yield* expectInvalid(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, dataHandling: "lenient" } }),
        "dataHandling"
      )
      const thread = yield* createThread({ agentId: agent.id })
      yield* expectInvalid(
        yield* api.request("PATCH", `/v1/threads/${thread.id}`, { body: { dataHandling: "standard" } }),
        "dataHandling"
      )
    }))

  it.effect("dataHandling only escalates: null -> strict is fine, strict -> null is 400", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const thread = yield* createThread({ agentId: agent.id })
      assert.isNull((yield* patchThread(thread.id, { dataHandling: null })).dataHandling)
      const strict = yield* patchThread(thread.id, { dataHandling: "strict" })
      assert.strictEqual(strict.dataHandling, "strict")
      // Re-sending strict is not a relaxation.
      assert.strictEqual((yield* patchThread(thread.id, { dataHandling: "strict" })).dataHandling, "strict")
      yield* expectInvalid(
        yield* api.request("PATCH", `/v1/threads/${thread.id}`, { body: { dataHandling: null } }),
        "dataHandling"
      )
      assert.strictEqual((yield* getThread(thread.id)).dataHandling, "strict")

      const bornStrict = yield* createThread({ agentId: agent.id, dataHandling: "strict" })
      yield* expectInvalid(
        yield* api.request("PATCH", `/v1/threads/${bornStrict.id}`, {
          body: { dataHandling: null, metadata: { x: "y" } }
        }),
        "dataHandling"
      )
      // A rejected PATCH changes nothing.
      assert.deepStrictEqual(yield* getThread(bornStrict.id), withoutCreated(bornStrict))
    }))

  // ---- band -------------------------------------------------------------------

  it.effect("band must be an available band", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      yield* expectInvalid(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, band: "frontier" } }),
        "band"
      )
      yield* expectInvalid(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, band: "ultra" } }),
        "band"
      )
      assert.strictEqual((yield* createThread({ agentId: agent.id, band: "core" })).band, "core")
    }))

  it.effect("PATCH band sets, refuses unavailable bands and null clears", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const thread = yield* createThread({ agentId: agent.id, band: "lite" })
      yield* expectInvalid(
        yield* api.request("PATCH", `/v1/threads/${thread.id}`, { body: { band: "frontier" } }),
        "band"
      )
      assert.strictEqual((yield* getThread(thread.id)).band, "lite")
      assert.strictEqual((yield* patchThread(thread.id, { band: "core" })).band, "core")
      assert.strictEqual((yield* patchThread(thread.id, {})).band, "core")
      assert.isNull((yield* patchThread(thread.id, { band: null })).band)
      assert.isNull((yield* getThread(thread.id)).band)
    }))

  // ---- context ----------------------------------------------------------------

  it.effect("context: a string is one block, \"\" and [] are empty", () =>
    Effect.gen(function*() {
      const agent = yield* createAgent()
      assert.deepStrictEqual((yield* createThread({ agentId: agent.id, context: "hello" })).context, [{
        content: "hello"
      }])
      assert.deepStrictEqual((yield* createThread({ agentId: agent.id, context: "" })).context, [])
      assert.deepStrictEqual((yield* createThread({ agentId: agent.id, context: [] })).context, [])
    }))

  it.effect("context: duplicate block ids and oversized blocks are 400", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const duplicate = [{ id: "a", content: "one" }, { id: "a", content: "two" }]
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, context: duplicate } }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, context: "x".repeat(32_769) } }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id, context: [{ content: 1 }] } }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      const thread = yield* createThread({ agentId: agent.id, context: "keep" })
      yield* TestServer.expectError(
        yield* api.request("PATCH", `/v1/threads/${thread.id}`, { body: { context: duplicate } }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      assert.deepStrictEqual((yield* getThread(thread.id)).context, [{ content: "keep" }])
    }))

  it.effect("PATCH context replaces it, with or without forceRefresh", () =>
    Effect.gen(function*() {
      const agent = yield* createAgent()
      const thread = yield* createThread({ agentId: agent.id, context: "first" })
      const refreshed = yield* patchThread(thread.id, {
        context: [{ id: "b1", content: "second" }, { id: "b2", content: "third" }],
        forceRefresh: true
      })
      assert.deepStrictEqual(refreshed.context, [{ id: "b1", content: "second" }, { id: "b2", content: "third" }])
      assert.deepStrictEqual(yield* getThread(thread.id), refreshed)
      const deferred = yield* patchThread(thread.id, { context: "fourth", forceRefresh: false })
      assert.deepStrictEqual(deferred.context, [{ content: "fourth" }])
      assert.deepStrictEqual((yield* patchThread(thread.id, { forceRefresh: true })).context, [{ content: "fourth" }])
      assert.deepStrictEqual((yield* patchThread(thread.id, { context: [] })).context, [])
    }))

  // ---- metadata and PATCH in general -------------------------------------------

  it.effect("PATCH metadata merges per key and null deletes a key", () =>
    Effect.gen(function*() {
      const agent = yield* createAgent()
      const thread = yield* createThread({ agentId: agent.id, metadata: { a: "1", b: "2" } })
      const merged = yield* patchThread(thread.id, { metadata: { b: null, c: "3", a: "one" } })
      assert.deepStrictEqual(merged.metadata, { a: "one", c: "3" })
      assert.deepStrictEqual((yield* patchThread(thread.id, { band: "lite" })).metadata, { a: "one", c: "3" })
      assert.deepStrictEqual((yield* patchThread(thread.id, { metadata: { missing: null } })).metadata, {
        a: "one",
        c: "3"
      })
      assert.deepStrictEqual((yield* getThread(thread.id)).metadata, { a: "one", c: "3" })
    }))

  it.effect("PATCH bumps updatedAt, keeps createdAt and the rest", () =>
    Effect.gen(function*() {
      const agent = yield* createAgent()
      const thread = yield* createThread({ agentId: agent.id, timeZone: "Europe/Paris", context: "ctx" })
      yield* TestClock.adjust("1 second")
      const now = yield* nowMillis
      const patched = yield* patchThread(thread.id, { metadata: { k: "v" } })
      assert.deepStrictEqual(patched, {
        ...withoutCreated(thread),
        metadata: { k: "v" },
        updatedAt: isoFromMillis(now)
      })
      assert.strictEqual(patched.createdAt, thread.createdAt)
    }))

  it.effect("PATCH rejects fields that are not patchable", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const other = yield* createAgent()
      const thread = yield* createThread({ agentId: agent.id })
      yield* expectInvalid(
        yield* api.request("PATCH", `/v1/threads/${thread.id}`, { body: { agentId: other.id } }),
        "agentId"
      )
      yield* expectInvalid(
        yield* api.request("PATCH", `/v1/threads/${thread.id}`, { body: { status: "running" } }),
        "status"
      )
      assert.deepStrictEqual(yield* getThread(thread.id), withoutCreated(thread))
    }))

  // ---- list -------------------------------------------------------------------

  it.effect("GET /v1/threads requires agentId", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      yield* expectInvalid(yield* api.request("GET", "/v1/threads"), "agentId")
      yield* expectInvalid(yield* api.request("GET", "/v1/threads?limit=5"), "agentId")
    }))

  it.effect("GET /v1/threads: empty list for an agent without threads", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const page = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/threads?agentId=${agent.id}`),
        200,
        ThreadPage
      )
      assert.deepStrictEqual(page, { object: "list", data: [], hasMore: false, nextCursor: null, limit: 20 })
    }))

  it.effect("GET /v1/threads pages newest first (default 20, cursor walk, only that agent's threads)", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const other = yield* createAgent()
      const ids: Array<string> = []
      for (let i = 0; i < 25; i++) {
        yield* TestClock.adjust("1 millis")
        ids.push((yield* createThread({ agentId: agent.id, metadata: { n: String(i) } })).id)
        if (i % 10 === 0) yield* createThread({ agentId: other.id })
      }
      const newestFirst = [...ids].reverse()

      const first = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/threads?agentId=${agent.id}`),
        200,
        ThreadPage
      )
      assert.strictEqual(first.object, "list")
      assert.strictEqual(first.limit, 20)
      assert.isTrue(first.hasMore)
      assert.isString(first.nextCursor)
      assert.deepStrictEqual(first.data.map((t) => t.id), newestFirst.slice(0, 20))
      assert.isTrue(first.data.every((t) => t.agentId === agent.id))
      for (let i = 1; i < first.data.length; i++) {
        assert.isTrue(first.data[i - 1].createdAt > first.data[i].createdAt)
      }

      const second = yield* TestServer.expectOk(
        yield* api.request(
          "GET",
          `/v1/threads?agentId=${agent.id}&cursor=${encodeURIComponent(first.nextCursor ?? "")}`
        ),
        200,
        ThreadPage
      )
      assert.deepStrictEqual(second.data.map((t) => t.id), newestFirst.slice(20))
      assert.isFalse(second.hasMore)
      assert.isNull(second.nextCursor)
      assert.strictEqual(second.limit, 20)

      // Walk with a small page size.
      const walked: Array<string> = []
      const sizes: Array<number> = []
      let cursor: string | null = null
      let pages = 0
      do {
        const query: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`
        const page: typeof ThreadPage.Type = yield* TestServer.expectOk(
          yield* api.request("GET", `/v1/threads?agentId=${agent.id}&limit=7${query}`),
          200,
          ThreadPage
        )
        assert.strictEqual(page.limit, 7)
        assert.strictEqual(page.hasMore, page.nextCursor !== null)
        walked.push(...page.data.map((t) => t.id))
        sizes.push(page.data.length)
        cursor = page.nextCursor
        pages++
      } while (cursor !== null && pages < 10)
      assert.deepStrictEqual(sizes, [7, 7, 7, 4])
      assert.deepStrictEqual(walked, newestFirst)

      // An exact fit has no further page.
      const exact = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/threads?agentId=${agent.id}&limit=25`),
        200,
        ThreadPage
      )
      assert.strictEqual(exact.data.length, 25)
      assert.isFalse(exact.hasMore)
      assert.isNull(exact.nextCursor)

      // The list items are the threads as read one by one.
      assert.deepStrictEqual(first.data[0], yield* getThread(newestFirst[0]))

      const others = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/threads?agentId=${other.id}`),
        200,
        ThreadPage
      )
      assert.strictEqual(others.data.length, 3)
      assert.isTrue(others.data.every((t) => t.agentId === other.id))
    }))

  it.effect("GET /v1/threads limit is 1..100 and the cursor must be one the API returned", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      yield* createThread({ agentId: agent.id })
      const max = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/threads?agentId=${agent.id}&limit=100`),
        200,
        ThreadPage
      )
      assert.strictEqual(max.limit, 100)
      assert.strictEqual(max.data.length, 1)
      yield* expectInvalid(yield* api.request("GET", `/v1/threads?agentId=${agent.id}&limit=101`), "limit")
      yield* expectInvalid(yield* api.request("GET", `/v1/threads?agentId=${agent.id}&limit=0`), "limit")
      yield* expectInvalid(yield* api.request("GET", `/v1/threads?agentId=${agent.id}&limit=abc`), "limit")
      yield* expectInvalid(yield* api.request("GET", `/v1/threads?agentId=${agent.id}&cursor=not-a-cursor`), "cursor")
    }))

  // ---- get / patch / delete ------------------------------------------------------

  it.effect.each(threadRoutes)("an unknown thread is 404 thread_not_found: $label", (route) =>
    Effect.gen(function*() {
      yield* expectNotFound(yield* call(route, "thread_nope"), "thread_not_found")
    }))

  it.effect.each(byOtherTenants(threadRoutes))(
    "a thread of another workspace is 403 permission_denied and unchanged: $label",
    ({ route, tenant }) =>
      Effect.gen(function*() {
        const agent = yield* createAgent()
        const thread = yield* createThread({ agentId: agent.id })
        yield* expectDenied(yield* call(route, thread.id, tenant.key))
        assert.deepStrictEqual(yield* getThread(thread.id), withoutCreated(thread))
      })
  )

  it.effect("DELETE removes the thread", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const kept = yield* createThread({ agentId: agent.id })
      const thread = yield* createThread({ agentId: agent.id })
      const reply = yield* api.request("DELETE", `/v1/threads/${thread.id}`)
      const deleted = yield* TestServer.expectOk(reply, 200, ThreadDeleted)
      assert.deepStrictEqual(deleted, { id: thread.id, object: "thread", deleted: true })
      assert.deepStrictEqual(reply.json, { id: thread.id, object: "thread", deleted: true })
      yield* TestServer.expectError(
        yield* api.request("GET", `/v1/threads/${thread.id}`),
        404,
        "not_found",
        "thread_not_found"
      )
      yield* TestServer.expectError(
        yield* api.request("PATCH", `/v1/threads/${thread.id}`, { body: { band: "lite" } }),
        404,
        "not_found",
        "thread_not_found"
      )
      yield* TestServer.expectError(
        yield* api.request("DELETE", `/v1/threads/${thread.id}`),
        404,
        "not_found",
        "thread_not_found"
      )
      const page = yield* TestServer.expectOk(
        yield* api.request("GET", `/v1/threads?agentId=${agent.id}`),
        200,
        ThreadPage
      )
      assert.deepStrictEqual(page.data.map((t) => t.id), [kept.id])
    }))

  it.effect("deleting the agent removes its threads", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const survivor = yield* createAgent()
      const t1 = yield* createThread({ agentId: agent.id })
      const t2 = yield* createThread({ agentId: agent.id })
      const t3 = yield* createThread({ agentId: survivor.id })
      const deleted = yield* TestServer.expectOk(
        yield* api.request("DELETE", `/v1/agents/${agent.id}`),
        200,
        AgentDeleted
      )
      assert.deepStrictEqual(deleted, { id: agent.id, object: "agent", deleted: true })
      for (const t of [t1, t2]) {
        yield* TestServer.expectError(
          yield* api.request("GET", `/v1/threads/${t.id}`),
          404,
          "not_found",
          "thread_not_found"
        )
        yield* TestServer.expectError(
          yield* api.request("DELETE", `/v1/threads/${t.id}`),
          404,
          "not_found",
          "thread_not_found"
        )
      }
      yield* TestServer.expectError(
        yield* api.request("GET", `/v1/threads?agentId=${agent.id}`),
        404,
        "not_found",
        "agent_not_found"
      )
      yield* TestServer.expectError(
        yield* api.request("POST", "/v1/threads", { body: { agentId: agent.id } }),
        404,
        "not_found",
        "agent_not_found"
      )
      assert.deepStrictEqual(yield* getThread(t3.id), withoutCreated(t3))
    }))

  it.effect("thread routes require an API key", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* createAgent()
      const thread = yield* createThread({ agentId: agent.id })
      const unauthenticated = [
        yield* api.request("POST", "/v1/threads", { key: null, body: { agentId: agent.id } }),
        yield* api.request("GET", `/v1/threads?agentId=${agent.id}`, { key: null }),
        yield* api.request("GET", `/v1/threads/${thread.id}`, { key: null }),
        yield* api.request("PATCH", `/v1/threads/${thread.id}`, { key: null, body: {} }),
        yield* api.request("DELETE", `/v1/threads/${thread.id}`, { key: "sk_test_unknown" })
      ]
      for (const reply of unauthenticated) {
        yield* TestServer.expectError(reply, 401, "authentication_error", "invalid_api_key")
      }
      assert.deepStrictEqual(yield* getThread(thread.id), withoutCreated(thread))
    }))
})

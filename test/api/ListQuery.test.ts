/**
 * Query parameters of every list route: each one is validated, and a value
 * the route cannot use (a limit out of range, a foreign cursor, an unknown
 * status, a `createdSince` that is not an ISO instant, a filter id that cannot
 * exist, a parameter the route does not have) is 400 invalid_request_error
 * naming the parameter with `details.errors[0].location` "query", never an
 * empty page that hides the mistake.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Page } from "../../domain/Page.ts"
import { Run } from "../../domain/Run.ts"
import { agentWithThread, getRun, startRun, streamOf } from "../support/Conversation.ts"
import { expectInvalid } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

const zeros = "0000000000000000000000"

/** Every list route, with the query it needs to be valid (threads require their agent). */
const listRoutes: ReadonlyArray<{ readonly path: string; readonly base: string }> = [
  { path: "/v1/agents", base: "" },
  { path: "/v1/threads", base: `agentId=agent_${zeros}&` },
  { path: "/v1/runs", base: "" },
  { path: "/v1/interactions", base: "" },
  { path: "/v1/secrets", base: "" },
  { path: "/v1/secret-contexts", base: "" },
  { path: "/v1/tool-approval-hooks", base: "" },
  { path: "/v1/result-handlers", base: "" },
  { path: "/v1/tool-servers", base: "" },
  { path: "/v1/http-connections", base: "" },
  { path: "/v1/files", base: "" }
]

const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url")

/** Queries every list route refuses, and the parameter each names. */
const pageQueries: ReadonlyArray<readonly [query: string, field: string]> = [
  ["limit=0", "limit"],
  ["limit=101", "limit"],
  ["limit=-1", "limit"],
  ["limit=abc", "limit"],
  ["limit=1.5", "limit"],
  ["limit=1e1", "limit"],
  ["limit=0x10", "limit"],
  ["limit=", "limit"],
  ["limit=1&limit=2", "limit"],
  ["cursor=not-a-cursor", "cursor"],
  ["cursor=", "cursor"],
  [`cursor=${base64url(JSON.stringify(["\u0000", `agent_${zeros}`]))}`, "cursor"],
  [`cursor=${base64url(JSON.stringify(["2026-01-01T00:00:00.000Z", "a\u0000b"]))}`, "cursor"],
  [`cursor=${base64url(JSON.stringify(["yesterday", `agent_${zeros}`]))}`, "cursor"],
  ["unknown=1", "unknown"],
  ["Limit=10", "Limit"]
]

interface QueryCase {
  readonly label: string
  readonly path: string
  readonly field: string
}

const everyRoute: ReadonlyArray<QueryCase> = listRoutes.flatMap(({ path, base }) =>
  pageQueries.map(([query, field]) => ({ label: `${path}?${query}`, path: `${path}?${base}${query}`, field }))
)

/** Filters of particular routes. */
const filters: ReadonlyArray<QueryCase> = [
  ...[
    "yesterday",
    "2026-02-30",
    "2026-13-01",
    "2026-01-01T10:00",
    "2026-01-01T10:00:00",
    "2026-01-01T24:00:00Z",
    "2026-01-01 10:00:00Z",
    "1767261600000",
    ""
  ].map((value) => ({
    label: `createdSince=${value}`,
    path: `/v1/runs?createdSince=${encodeURIComponent(value)}`,
    field: "createdSince"
  })),
  { label: "runs status=nope", path: "/v1/runs?status=nope", field: "status" },
  { label: "runs agentId with a thread prefix", path: `/v1/runs?agentId=thread_${zeros}`, field: "agentId" },
  { label: "runs threadId not an id", path: "/v1/runs?threadId=nope", field: "threadId" },
  {
    label: "runs threadId twice",
    path: `/v1/runs?threadId=thread_${zeros}&threadId=thread_${zeros}`,
    field: "threadId"
  },
  { label: "interactions status=nope", path: "/v1/interactions?status=nope", field: "status" },
  { label: "interactions kind=nope", path: "/v1/interactions?kind=nope", field: "kind" },
  { label: "interactions runId not a run id", path: `/v1/interactions?runId=agent_${zeros}`, field: "runId" },
  { label: "interactions rootRunId not a run id", path: `/v1/interactions?rootRunId=wkr_${zeros}`, field: "rootRunId" },
  { label: "threads without agentId", path: "/v1/threads", field: "agentId" },
  { label: "threads agentId not an id", path: "/v1/threads?agentId=x%2Fy", field: "agentId" },
  { label: "secrets metadata[] (empty key)", path: "/v1/secrets?metadata[]=x", field: "metadata[]" },
  {
    label: "secrets metadata key too long",
    path: `/v1/secrets?metadata[${"k".repeat(41)}]=x`,
    field: `metadata[${"k".repeat(41)}]`
  },
  {
    label: "secrets metadata value too long",
    path: `/v1/secrets?metadata[team]=${"v".repeat(501)}`,
    field: "metadata[team]"
  },
  { label: "secrets metadata without a key", path: "/v1/secrets?metadata=x", field: "metadata" },
  { label: "secrets name twice", path: "/v1/secrets?name=a&name=b", field: "name" },
  { label: "bands take no parameters", path: "/v1/bands?limit=1", field: "limit" }
]

const expectQueryError = (reply: TestServer.Reply, field: string) =>
  Effect.gen(function*() {
    const error = yield* expectInvalid(reply, field)
    const errors = error.details?.["errors"]
    assert.isTrue(Array.isArray(errors) && errors.length > 0, reply.text)
    assert.deepInclude(Array.isArray(errors) ? errors[0] : undefined, { field, location: "query" }, reply.text)
  })

TestServer.suite()("list query parameters", (it) => {
  it.effect.each(everyRoute)("400 naming the parameter: $label", ({ path, field }) =>
    Effect.gen(function*() {
      yield* expectQueryError(yield* TestServer.request("GET", path), field)
    }))

  it.effect.each(filters)("400 naming the filter: $label", ({ path, field }) =>
    Effect.gen(function*() {
      yield* expectQueryError(yield* TestServer.request("GET", path), field)
    }))

  it.effect.each(listRoutes)(
    "the parameters a route has are accepted: $path",
    ({ path, base }) =>
      Effect.gen(function*() {
        const reply = yield* TestServer.request("GET", `${path}?${base}limit=100`)
        // Threads of an agent that does not exist: the one list that names a parent (404, as ever).
        assert.strictEqual(reply.status, path === "/v1/threads" ? 404 : 200, reply.text)
      })
  )

  it.effect("createdSince: a date-time with any zone, or a date (midnight UTC), compared as instants", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread()
      yield* TestClock.adjust("1 hour")
      const run = yield* startRun(thread.id, { input: "hi" })
      yield* streamOf(run.runId)
      const createdAt = Date.parse((yield* getRun(run.runId)).createdAt)
      /** `millis` written in the zone one hour east of UTC, without fractions when there are none. */
      const plusOneHour = (millis: number) =>
        new Date(millis + 3_600_000).toISOString().replace(".000Z", "").replace("Z", "") + "+01:00"
      const day = new Date(createdAt).toISOString().slice(0, 10)
      const list = (createdSince: string) =>
        Effect.flatMap(
          TestServer.request("GET", `/v1/runs?threadId=${thread.id}&createdSince=${encodeURIComponent(createdSince)}`),
          (reply) => TestServer.expectOk(reply, 200, Page(Run))
        ).pipe(Effect.map((page) => page.data.map((r) => r.id)))
      assert.deepStrictEqual(yield* list(day), [run.runId], "a date is that day's midnight UTC")
      assert.deepStrictEqual(yield* list(plusOneHour(createdAt)), [run.runId], "the same instant in another zone")
      assert.deepStrictEqual(yield* list(plusOneHour(createdAt + 1)), [], "one millisecond later")
      assert.deepStrictEqual(
        yield* list(new Date(createdAt).toISOString().replace("Z", "999Z")),
        [run.runId],
        "fractions cut to ms"
      )
      assert.deepStrictEqual(yield* list(new Date(createdAt + 86_400_000).toISOString().slice(0, 10)), [])
    }))

  it.effect("a well-formed filter id that matches nothing is an empty page", () =>
    Effect.gen(function*() {
      for (
        const path of [
          `/v1/runs?agentId=agent_${zeros}`,
          `/v1/runs?threadId=thread_${zeros}`,
          `/v1/interactions?runId=run_${zeros}`,
          `/v1/interactions?rootRunId=run_${zeros}`
        ]
      ) {
        const page = yield* TestServer.expectOk(yield* TestServer.request("GET", path), 200, Page(Run))
        assert.deepStrictEqual(page.data, [], path)
      }
    }))

  it.effect("a route without query parameters refuses any", () =>
    Effect.gen(function*() {
      yield* expectQueryError(yield* TestServer.request("GET", `/v1/agents/agent_${zeros}?expand=all`), "expand")
      yield* expectQueryError(yield* TestServer.request("POST", "/v1/agents?dryRun=1", { body: {} }), "dryRun")
    }))
})

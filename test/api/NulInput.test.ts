/**
 * A NUL character (U+0000) anywhere in a request, tried as a fuzzer would:
 * every route with an id gets ids that cannot exist (a NUL, a foreign
 * prefix), every body a string, key or nested value holding a NUL, every list
 * a query value holding one. PostgreSQL cannot store a NUL, so none of these
 * may reach SQL: ids answer 404 `<resource>_not_found`, bodies and queries 400
 * naming the field, and nothing answers 5xx.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import * as Collection from "../support/Collection.ts"
import { expectInvalid, expectNotFound, type IdRoute, idRoute, resourceRoutes } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

const zeros = "0000000000000000000000"

interface PathCase {
  readonly route: IdRoute
  readonly code: string
}

const cases = (code: string, routes: ReadonlyArray<IdRoute>): ReadonlyArray<PathCase> =>
  routes.map((route) => ({ route, code }))

/** Every route that addresses a resource by id, with a body it would otherwise accept. */
const idRoutes: ReadonlyArray<PathCase> = [
  ...cases("agent_not_found", resourceRoutes("/v1/agents", { band: "lite" })),
  ...cases("thread_not_found", [
    ...resourceRoutes("/v1/threads", { timeZone: "UTC" }, [["messages", { input: "hi" }], ["cancel"]]),
    idRoute("GET", (id) => `/v1/threads/${id}/messages?warm=1`),
    idRoute("GET", (id) => `/v1/threads/${id}/workspace/files`),
    idRoute("GET", (id) => `/v1/threads/${id}/workspace/files/content?path=a.txt`)
  ]),
  ...cases("run_not_found", [
    idRoute("GET", (id) => `/v1/runs/${id}`),
    idRoute("GET", (id) => `/v1/runs/${id}/stream`),
    idRoute("GET", (id) => `/v1/runs/${id}/workers/wkr_${zeros}/stream`),
    idRoute("POST", (id) => `/v1/runs/${id}/cancel`),
    idRoute("DELETE", (id) => `/v1/runs/${id}/followups/fu_${zeros}`),
    idRoute("POST", (id) => `/v1/runs/${id}/interactions/resolve`, { items: [{ id: `tar_${zeros}`, cancel: true }] })
  ]),
  ...cases("followup_not_found", [idRoute("DELETE", (id) => `/v1/runs/run_${zeros}/followups/${id}`)]),
  ...cases("interaction_not_found", [
    idRoute("GET", (id) => `/v1/interactions/${id}`),
    idRoute("POST", (id) => `/v1/interactions/${id}/resolve`, { cancel: true })
  ]),
  ...cases("secret_not_found", resourceRoutes("/v1/secrets", { contentType: null }, [["rotate", { value: "v" }]])),
  ...cases("secret_context_not_found", resourceRoutes("/v1/secret-contexts", { metadata: {} })),
  ...cases(
    "tool_approval_hook_not_found",
    resourceRoutes("/v1/tool-approval-hooks", { enabled: true }, [["rotate-secret", { secret: "s_signing_secret" }], [
      "test"
    ]])
  ),
  ...cases(
    "result_handler_not_found",
    resourceRoutes("/v1/result-handlers", { metadata: {} }, [["rotate-secret", { secret: "s_signing_secret" }]])
  ),
  ...cases("tool_server_not_found", resourceRoutes("/v1/tool-servers", { enabled: true }, [["test"]])),
  ...cases("http_connection_not_found", resourceRoutes("/v1/http-connections", { enabled: true }, [["test"]]))
]

/** Ids no resource can have, as they appear in the path (percent-encoded). */
const impossibleIds = ["%00", "run_a%00b", `thread_${zeros}%00`, "%00%00%00", "thread_x%2Fy", "agent_%E2%82%AC"]

const prefixOf = (code: string): string =>
  ({
    agent_not_found: "agent_",
    thread_not_found: "thread_",
    run_not_found: "run_",
    followup_not_found: "fu_",
    interaction_not_found: "tar_",
    secret_not_found: "sec_",
    secret_context_not_found: "sctx_",
    tool_approval_hook_not_found: "hook_",
    result_handler_not_found: "rh_",
    tool_server_not_found: "ts_",
    http_connection_not_found: "hc_"
  })[code] ?? "x_"

/** A route's body (if any), sent as is: the path id is what is wrong. */
const send = (route: IdRoute, pathId: string) => {
  const body = route.body?.(pathId)
  return TestServer.request(route.method, route.path(pathId), body === undefined ? {} : { body })
}

interface BodyCase {
  readonly label: string
  readonly method: string
  readonly path: string
  readonly body: unknown
  readonly field: string
}

const post = (path: string, body: unknown, field: string, method = "POST"): BodyCase => ({
  label: `${method} ${path} ${field}`,
  method,
  path,
  body,
  field
})

const nul = "a\u0000b"
const agentPath = `/v1/agents/agent_${zeros}`
const threadPath = `/v1/threads/thread_${zeros}`

/** A NUL in a body string, a key, an array item, nested, on every route that takes a body. */
const bodyCases: ReadonlyArray<BodyCase> = [
  post("/v1/agents", { context: nul }, "context"),
  post("/v1/agents", { context: [{ content: "fine" }, { id: "b", content: nul }] }, "context[1].content"),
  post("/v1/agents", { metadata: { team: nul } }, "metadata.team"),
  post("/v1/agents", { metadata: { [nul]: "x" } }, `metadata.${nul}`),
  post(
    "/v1/agents",
    { capabilities: { mcp: { toolServerIds: [`ts_${zeros}`, nul] } } },
    "capabilities.mcp.toolServerIds[1]"
  ),
  post("/v1/agents", { unknownField: nul }, "unknownField"),
  post("/v1/agents/validate", { context: nul }, "context"),
  post(agentPath, { metadata: { team: nul } }, "metadata.team", "PATCH"),
  post("/v1/threads", { agentId: `agent_${zeros}\u0000` }, "agentId"),
  post("/v1/threads", { agentId: `agent_${zeros}`, metadata: { k: nul } }, "metadata.k"),
  post(threadPath, { context: [{ content: nul }] }, "context[0].content", "PATCH"),
  post(`${threadPath}/messages`, { input: nul }, "input"),
  post(`${threadPath}/messages`, { input: "hi", metadata: { k: nul } }, "metadata.k"),
  post("/v1/runs", { threadId: `thread_${zeros}`, input: { text: nul } }, "input.text"),
  post("/v1/runs", { threadId: nul, input: "hi" }, "threadId"),
  post("/v1/secrets", { name: nul, value: "v" }, "name"),
  post("/v1/secrets", { name: "n", value: nul }, "value"),
  post(`/v1/secrets/sec_${zeros}`, { metadata: { [nul]: null } }, `metadata.${nul}`, "PATCH"),
  post(`/v1/secrets/sec_${zeros}/rotate`, { value: nul }, "value"),
  post("/v1/secret-contexts", {
    name: "c",
    projections: [{ type: "workspace_env", secretId: `sec_${zeros}`, env: nul }]
  }, "projections[0].env"),
  post("/v1/tool-approval-hooks", { name: "h", url: "https://example.com", secret: nul }, "secret"),
  post(`/v1/tool-approval-hooks/hook_${zeros}/rotate-secret`, { secret: nul }, "secret"),
  post(
    "/v1/result-handlers",
    { kind: "artifact", name: nul, url: "https://example.com", secret: "s_signing_secret" },
    "name"
  ),
  post(`/v1/result-handlers/rh_${zeros}/rotate-secret`, { secret: nul }, "secret"),
  post("/v1/tool-servers", { name: "t", transport: "http", url: `https://example.com/${nul}` }, "url"),
  post("/v1/http-connections", { name: "c", spec: nul }, "spec"),
  post(`/v1/http-connections/hc_${zeros}`, { allowedOperations: ["ok", nul] }, "allowedOperations[1]", "PATCH"),
  post(`/v1/interactions/tar_${zeros}/resolve`, { reason: nul }, "reason"),
  post(
    `/v1/interactions/tar_${zeros}/resolve`,
    { inputResponses: [{ requestId: "q", text: nul }] },
    "inputResponses[0].text"
  ),
  post(`/v1/runs/run_${zeros}/interactions/resolve`, { items: [{ id: nul, cancel: true }] }, "items[0].id"),
  post("/v1/agents", nul, "body")
]

interface QueryCase {
  readonly path: string
  readonly field: string
}

/** A NUL in a query value or name, on every list route. */
const queryCases: ReadonlyArray<QueryCase> = [
  ...[
    "/v1/agents",
    "/v1/secrets",
    "/v1/secret-contexts",
    "/v1/tool-approval-hooks",
    "/v1/result-handlers",
    "/v1/tool-servers",
    "/v1/http-connections",
    "/v1/runs",
    "/v1/interactions"
  ].map((path) => ({ path: `${path}?cursor=a%00b`, field: "cursor" })),
  { path: `/v1/threads?agentId=agent_${zeros}&cursor=%00`, field: "cursor" },
  { path: "/v1/threads?agentId=agent_%00", field: "agentId" },
  { path: "/v1/runs?createdSince=2026-01-01T00:00:00Z%00", field: "createdSince" },
  { path: "/v1/runs?threadId=%00", field: "threadId" },
  { path: "/v1/interactions?runId=run_%00", field: "runId" },
  { path: "/v1/secrets?name=a%00b", field: "name" },
  { path: "/v1/secrets?metadata[team]=%00", field: "metadata[team]" },
  { path: "/v1/agents?li%00mit=1", field: "li\u0000mit" },
  { path: `/v1/threads/thread_${zeros}/messages?warm=%00`, field: "warm" }
]

TestServer.suite()("NUL characters in requests", (it) => {
  it.effect.each(idRoutes)(
    "a path id that cannot exist is 404 $code: $route.label",
    ({ route, code }) =>
      Effect.gen(function*() {
        for (
          const id of [
            ...impossibleIds,
            `x${prefixOf(code)}${zeros}`,
            `${code === "agent_not_found" ? "thread_" : "agent_"}${zeros}`
          ]
        ) {
          yield* expectNotFound(yield* send(route, id), code)
        }
      })
  )

  it.effect("the 404 names the id it was given, NUL included", () =>
    Effect.gen(function*() {
      const error = yield* expectNotFound(yield* TestServer.request("GET", "/v1/runs/run_a%00b"), "run_not_found")
      assert.include(error.message, "'run_a\u0000b'")
    }))

  it.effect.each(bodyCases)(
    "a NUL in a body string is 400 naming it: $label",
    ({ method, path, body, field }) =>
      Effect.gen(function*() {
        const error = yield* expectInvalid(yield* TestServer.request(method, path, { body }), field)
        assert.deepStrictEqual(error.details?.["errors"], [
          { field, location: "body", message: "must not contain a NUL character (U+0000)" }
        ])
      })
  )

  it.effect.each(queryCases)(
    "a NUL in a query parameter is 400 naming it: $path",
    ({ path, field }) =>
      Effect.gen(function*() {
        const error = yield* expectInvalid(yield* TestServer.request("GET", path), field)
        assert.deepStrictEqual(error.details?.["errors"], [
          { field, location: "query", message: "must not contain a NUL character (U+0000)" }
        ])
      })
  )

  it.effect("an escaped backslash before u0000 is text, not a NUL, and is stored as sent", () =>
    Effect.gen(function*() {
      const agent = yield* Collection.agents.create({ context: "a\\u0000b", metadata: { team: "\\u0000" } })
      assert.deepStrictEqual(agent.context, [{ content: "a\\u0000b" }])
      assert.deepStrictEqual((yield* Collection.agents.read(agent.id)).metadata, { team: "\\u0000" })
    }))

  it.effect("nothing was stored by the refused requests, and the service still answers", () =>
    Effect.gen(function*() {
      const agent = yield* Collection.agents.create({ context: "fine" })
      yield* expectInvalid(yield* Collection.agents.patch(agent.id, { context: nul }), "context")
      assert.deepStrictEqual((yield* Collection.agents.read(agent.id)).context, [{ content: "fine" }])
    }))
})

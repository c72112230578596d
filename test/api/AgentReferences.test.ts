/**
 * Agents referencing adapters (spec 2.1, 4.6, 4.7, 4.10, 4.5, 2.1.3 and 7):
 * create, validate and update refuse ids that do not exist in the caller's
 * workspace (400 naming the exact path), accept existing ones, and deleting a
 * referenced adapter is 409 resource_in_use listing the agents until the
 * references are dropped.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Agent } from "../../domain/Agent.ts"
import { Deleted } from "../../domain/Page.ts"
import * as Collection from "../support/Collection.ts"
import { expectInvalid } from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

// ---- helpers ----------------------------------------------------------------

const { Keys, request } = TestServer

const unique = Collection.uniqueName

const spec = JSON.stringify({
  openapi: "3.0.3",
  info: { title: "t", version: "1" },
  servers: [{ url: "https://api.example.com" }],
  paths: { "/items": { get: { operationId: "listItems", responses: { "200": { description: "OK" } } } } }
})

/** The kinds of adapter an agent can reference, how to make one, and where the reference lives. */
interface Kind {
  readonly label: string
  readonly make: (key: string) => Effect.Effect<string, never, TestServer.TestApi>
  /** The agent body fields referencing `ids`. */
  readonly reference: (ids: ReadonlyArray<string>) => Record<string, unknown>
  /** The path of element `index` (single-valued references ignore it). */
  readonly field: (index: number) => string
  /** The agent update dropping the reference. */
  readonly drop: Record<string, unknown>
  readonly path: string
  readonly object: string
  readonly notFound: string
  /** The id prefix of the kind, for well-formed ids that do not exist. */
  readonly prefix: string
}

const toolServer: Kind = {
  label: "tool server",
  make: (key) =>
    Effect.map(
      Collection.toolServers.create(
        { name: unique("ref-ts"), transport: "http", url: "https://93.184.215.14/mcp" },
        key
      ),
      (r) => r.id
    ),
  reference: (ids) => ({ capabilities: { mcp: { toolServerIds: ids } } }),
  field: (i) => `capabilities.mcp.toolServerIds[${i}]`,
  drop: { capabilities: {} },
  path: "/v1/tool-servers",
  object: "tool_server",
  notFound: "tool_server_not_found",
  prefix: "ts_"
}

const httpConnection: Kind = {
  label: "HTTP connection",
  make: (key) => Effect.map(Collection.httpConnections.create({ name: unique("ref-hc"), spec }, key), (r) => r.id),
  reference: (ids) => ({ capabilities: { http: { connectionIds: ids } } }),
  field: (i) => `capabilities.http.connectionIds[${i}]`,
  drop: { capabilities: {} },
  path: "/v1/http-connections",
  object: "http_connection",
  notFound: "http_connection_not_found",
  prefix: "hc_"
}

const hook: Kind = {
  label: "tool approval hook",
  make: (key) =>
    Effect.map(
      Collection.toolApprovalHooks.create(
        { name: unique("ref-hook"), url: "https://93.184.215.14/h", secret: "s_signing_secret" },
        key
      ),
      (r) => r.id
    ),
  reference: (ids) => ({ approvals: { toolExecution: { hookId: ids[0] } } }),
  field: () => "approvals.toolExecution.hookId",
  drop: { approvals: null },
  path: "/v1/tool-approval-hooks",
  object: "tool_approval_hook",
  notFound: "tool_approval_hook_not_found",
  prefix: "hook_"
}

const makeHandler = (key: string) =>
  Effect.map(
    Collection.resultHandlers.create({
      kind: "artifact",
      name: unique("ref-rh"),
      url: "https://93.184.215.14/r",
      secret: "s_signing_secret"
    }, key),
    (r) => r.id
  )

const exportsHandler: Kind = {
  label: "result handler (exports)",
  make: makeHandler,
  reference: (ids) => ({ artifacts: { exports: { resultHandlerId: ids[0] } } }),
  field: () => "artifacts.exports.resultHandlerId",
  drop: { artifacts: null },
  path: "/v1/result-handlers",
  object: "result_handler",
  notFound: "result_handler_not_found",
  prefix: "rh_"
}

const oversizedHandler: Kind = {
  ...exportsHandler,
  label: "result handler (oversized tool results)",
  reference: (ids) => ({ artifacts: { oversizedToolResults: { resultHandlerId: ids[0] } } }),
  field: () => "artifacts.oversizedToolResults.resultHandlerId"
}

const secretContext: Kind = {
  label: "secret context",
  make: (key) =>
    Effect.gen(function*() {
      const secret = yield* Collection.secrets.create({ name: unique("ref-secret"), value: "v" }, key)
      const context = yield* Collection.secretContexts.create(
        { name: unique("ref-sctx"), projections: [{ type: "workspace_env", secretId: secret.id, env: "TOKEN" }] },
        key
      )
      return context.id
    }),
  reference: (ids) => ({ workspace: { type: "managed", secretContexts: ids } }),
  field: (i) => `workspace.secretContexts[${i}]`,
  drop: { workspace: null },
  path: "/v1/secret-contexts",
  object: "secret_context",
  notFound: "secret_context_not_found",
  prefix: "sctx_"
}

const kinds: ReadonlyArray<Kind> = [toolServer, httpConnection, hook, exportsHandler, oversizedHandler, secretContext]
/** The kinds whose reference is a list. */
const listKinds: ReadonlyArray<Kind> = [toolServer, httpConnection, secretContext]

const { create: createAgent, update: updateAgent } = Collection.agents

/** Create, validate and update (of `existing`) all refuse `body` naming `field`; `existing` is untouched. */
const refusedEverywhere = (existing: Agent, body: Record<string, unknown>, field: string) =>
  Effect.gen(function*() {
    yield* expectInvalid(yield* request("POST", "/v1/agents", { body }), field)
    yield* expectInvalid(yield* request("POST", "/v1/agents/validate", { body }), field)
    yield* expectInvalid(yield* request("PATCH", `/v1/agents/${existing.id}`, { body }), field)
    const after = yield* TestServer.expectOk(yield* request("GET", `/v1/agents/${existing.id}`), 200, Agent)
    assert.deepStrictEqual(after, existing)
  })

const Valid = Schema.Struct({ valid: Schema.Literal(true) })

const inUse = (kind: Kind, id: string, agentIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const error = yield* TestServer.expectError(
      yield* request("DELETE", `${kind.path}/${id}`),
      409,
      "api_error",
      "resource_in_use"
    )
    assert.deepStrictEqual(error.details, { inUseByAgentIds: [...agentIds].sort() }, kind.label)
  })

// ---- the routes on one shared server ----------------------------------------

TestServer.suite()("agent references", (it) => {
  it.effect("ids that do not exist are 400 naming the exact path on create, validate and update", () =>
    Effect.gen(function*() {
      const existing = yield* createAgent({})
      for (const kind of kinds) {
        yield* refusedEverywhere(existing, kind.reference(["does_not_exist"]), kind.field(0))
        // Ids of the right shape for the kind are refused just the same.
        yield* refusedEverywhere(existing, kind.reference([`${kind.prefix}0000000000000000000000`]), kind.field(0))
      }
    }))

  it.effect("ids of another workspace or another organization are 400, never borrowed", () =>
    Effect.gen(function*() {
      const existing = yield* createAgent({})
      for (const kind of kinds) {
        for (const key of [Keys.b, Keys.c]) {
          const foreign = yield* kind.make(key)
          yield* refusedEverywhere(existing, kind.reference([foreign]), kind.field(0))
          // Its own workspace may use it.
          const owner = yield* createAgent(kind.reference([foreign]), key)
          assert.strictEqual(owner.configVersion, 1)
        }
      }
    }))

  it.effect("the path names the offending element of a list", () =>
    Effect.gen(function*() {
      const existing = yield* createAgent({})
      for (const kind of listKinds) {
        const first = yield* kind.make(Keys.a)
        const second = yield* kind.make(Keys.a)
        const foreign = yield* kind.make(Keys.b)
        yield* refusedEverywhere(existing, kind.reference([first, "missing_id"]), kind.field(1))
        yield* refusedEverywhere(existing, kind.reference([first, second, foreign]), kind.field(2))
        yield* refusedEverywhere(existing, kind.reference(["missing_id", first]), kind.field(0))
      }
    }))

  it.effect("existing references of the caller's workspace are accepted on create, validate and update", () =>
    Effect.gen(function*() {
      const [serverA, serverB, connection, hookId, handler, overflow, context] = [
        yield* toolServer.make(Keys.a),
        yield* toolServer.make(Keys.a),
        yield* httpConnection.make(Keys.a),
        yield* hook.make(Keys.a),
        yield* makeHandler(Keys.a),
        yield* makeHandler(Keys.a),
        yield* secretContext.make(Keys.a)
      ]
      const body = {
        capabilities: { mcp: { toolServerIds: [serverA, serverB] }, http: { connectionIds: [connection] } },
        approvals: { toolExecution: { hookId } },
        artifacts: { exports: { resultHandlerId: handler }, oversizedToolResults: { resultHandlerId: overflow } },
        workspace: { type: "managed", secretContexts: [context] }
      }
      const agent = yield* createAgent(body)
      // The agent's references are branded ids; the body holds them as the client sent them.
      assert.deepStrictEqual<unknown>(agent.capabilities, body.capabilities)
      assert.deepStrictEqual<unknown>(agent.approvals, body.approvals)
      assert.deepStrictEqual(agent.artifacts.exports, body.artifacts.exports)
      assert.deepStrictEqual(agent.artifacts.oversizedToolResults, body.artifacts.oversizedToolResults)
      assert.isNotNull(agent.workspace)
      assert.deepStrictEqual<unknown>(
        agent.workspace?.type === "managed" ? agent.workspace.secretContexts : undefined,
        [
          context
        ]
      )

      yield* TestServer.expectOk(yield* request("POST", "/v1/agents/validate", { body }), 200, Valid)

      const plain = yield* createAgent({})
      const updated = yield* updateAgent(plain.id, body)
      assert.deepStrictEqual<unknown>(updated.capabilities, body.capabilities)
      assert.strictEqual(updated.configVersion, 2)
      for (const kind of kinds) {
        const id = yield* kind.make(Keys.a)
        const single = yield* createAgent(kind.reference([id]))
        assert.strictEqual(single.configVersion, 1, kind.label)
      }
    }))

  it.effect("deleting a referenced adapter is 409 resource_in_use listing the agents, then 200 once they let go", () =>
    Effect.gen(function*() {
      for (const kind of kinds) {
        const id = yield* kind.make(Keys.a)
        const first = yield* createAgent(kind.reference([id]))
        const second = yield* createAgent({})
        yield* updateAgent(second.id, kind.reference([id]))
        yield* createAgent({}) // an agent without the reference is not listed
        yield* inUse(kind, id, [first.id, second.id])

        yield* updateAgent(first.id, kind.drop)
        yield* inUse(kind, id, [second.id])
        yield* updateAgent(second.id, kind.drop)

        const deleted = yield* TestServer.expectOk(
          yield* request("DELETE", `${kind.path}/${id}`),
          200,
          Deleted(kind.object)
        )
        assert.deepStrictEqual(deleted, { id, object: kind.object, deleted: true }, kind.label)
        yield* TestServer.expectError(yield* request("GET", `${kind.path}/${id}`), 404, "not_found", kind.notFound)
        // The agents themselves still stand, without the reference.
        yield* TestServer.expectOk(yield* request("GET", `/v1/agents/${first.id}`), 200, Agent)
      }
    }))

  it.effect("a deleted agent no longer holds its references", () =>
    Effect.gen(function*() {
      for (const kind of kinds) {
        const id = yield* kind.make(Keys.a)
        const agent = yield* createAgent(kind.reference([id]))
        yield* inUse(kind, id, [agent.id])
        yield* TestServer.expectOk(yield* request("DELETE", `/v1/agents/${agent.id}`), 200, Deleted("agent"))
        yield* TestServer.expectOk(yield* request("DELETE", `${kind.path}/${id}`), 200, Deleted(kind.object))
      }
    }))

  it.effect("a result handler used for both exports and oversized results lists every agent once", () =>
    Effect.gen(function*() {
      const handler = yield* makeHandler(Keys.a)
      const both = yield* createAgent({
        artifacts: { exports: { resultHandlerId: handler }, oversizedToolResults: { resultHandlerId: handler } }
      })
      const exportsOnly = yield* createAgent(exportsHandler.reference([handler]))
      const overflowOnly = yield* createAgent(oversizedHandler.reference([handler]))
      yield* inUse(exportsHandler, handler, [both.id, exportsOnly.id, overflowOnly.id])
      // Dropping one of the two references of `both` keeps it listed.
      yield* updateAgent(both.id, { artifacts: { oversizedToolResults: { resultHandlerId: handler } } })
      yield* inUse(exportsHandler, handler, [both.id, exportsOnly.id, overflowOnly.id])
      for (const agent of [both, exportsOnly, overflowOnly]) yield* updateAgent(agent.id, { artifacts: null })
      yield* TestServer.expectOk(
        yield* request("DELETE", `/v1/result-handlers/${handler}`),
        200,
        Deleted("result_handler")
      )
    }))

  it.effect("an agent referencing several servers or connections holds each until it drops it", () =>
    Effect.gen(function*() {
      for (const kind of [toolServer, httpConnection]) {
        const id = yield* kind.make(Keys.a)
        const other = yield* kind.make(Keys.a)
        const agent = yield* createAgent(kind.reference([other, id]))
        yield* inUse(kind, id, [agent.id])
        yield* inUse(kind, other, [agent.id])
        yield* updateAgent(agent.id, kind.reference([other]))
        yield* TestServer.expectOk(yield* request("DELETE", `${kind.path}/${id}`), 200, Deleted(kind.object))
        yield* inUse(kind, other, [agent.id])
      }
    }))
})

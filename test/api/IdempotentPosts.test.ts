/**
 * `Idempotency-Key` on every POST behind an API key (spec 1 conventions, 7,
 * 8), as a table over the routes: a retry with the same key and body answers
 * the first answer (same status, same body) and the route acts once (one
 * resource listed, one delivery to the peer, one configVersion step); another
 * body under the key is 409 `idempotency_key_conflict` and acts not at all. A
 * retry while the first is still running is 503 `service_unavailable`, held
 * deterministically by a hook server that has not answered yet. The contract
 * declares the header and the 409 / 503 on each of these routes, and the table
 * covers every one of them but those other files do (`coveredElsewhere`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, type Scope } from "effect"
import { OpenApi } from "effect/http-api"
import { TestClock } from "effect/testing"
import { FileObject } from "../../domain/Artifact.ts"
import { CodehostConnection } from "../../domain/Codehost.ts"
import { Environment } from "../../domain/Environment.ts"
import { Interaction } from "../../domain/Interaction.ts"
import { Run } from "../../domain/Run.ts"
import { Secret } from "../../domain/Secret.ts"
import { Api } from "../../http/Api.ts"
import * as Collection from "../support/Collection.ts"
import { agentWithThread, send } from "../support/Conversation.ts"
import { gateServer } from "../support/GateMcpServer.ts"
import * as Harness from "../support/github/Harness.ts"
import { hold, HookServer } from "../support/HookServer.ts"
import { pendingOf } from "../support/Interactions.ts"
import * as McpServers from "../support/McpServers.ts"
import { tinySpec } from "../support/OpenApiDocuments.ts"
import * as TestServer from "../support/TestServer.ts"
import * as Uploads from "../support/Uploads.ts"

const { request, expectOk, expectError } = TestServer
const { uniqueName } = Collection

const idem = (key: string) => ({ "idempotency-key": key })

type Env = TestServer.TestApi | HookServer | Harness.GitHub | Scope.Scope

/** What a case's request acts on, made fresh for it. */
interface Prepared {
  /** Sends the route's request under `key`, with its body or (`other`) another one. */
  readonly send: (key: string, other: boolean) => Effect.Effect<TestServer.Reply, never, Env>
  /** Whether the route takes a body, so that another body can conflict. */
  readonly conflicts: boolean
  /** What the route has done so far, as a client sees it: the first request changes it, a replay must not. */
  readonly effects: Effect.Effect<unknown, never, Env> | null
}

interface PostCase {
  /** The operation as the OpenAPI document names it. */
  readonly route: string
  readonly prepare: Effect.Effect<Prepared, never, Env>
}

/** A JSON POST to `path`; `other` is the conflicting body (none: the route takes no body). */
const json = (
  path: string,
  body: unknown,
  other: unknown,
  effects: Effect.Effect<unknown, never, Env> | null
): Prepared => ({
  send: (key, useOther) =>
    request("POST", path, {
      headers: idem(key),
      ...(body === undefined ? {} : { body: useOther ? other : body })
    }),
  conflicts: body !== undefined,
  effects
})

const count = <A>(collection: Collection.Collection<A>) => Effect.map(collection.ids(), (ids) => ids.length)

const codehostConnections = Collection.collection("/v1/codehost-connections", CodehostConnection)
const files = Collection.collection("/v1/files", FileObject)
const environments = Collection.collection("/v1/environments", Environment)

const configVersion = <A extends { readonly configVersion: number }>(
  collection: Collection.Collection<A>,
  id: string
) => Effect.map(collection.read(id), (resource) => resource.configVersion)

const hookUrl = Effect.map(HookServer, (server) => `${server.origin}/hooks/review`)

const deliveries = Effect.flatMap(HookServer, (server) => Effect.map(server.received, (r) => r.length))

const githubRequests = Effect.map(Harness.GitHub, (gh) => gh.requests.length)

/** A run parked on an approval (a tool server with `approval: "always"`): its thread, id and pending interaction. */
const parkedRun = Effect.gen(function*() {
  const gate = yield* gateServer
  const name = uniqueName("gate")
  const server = yield* Collection.toolServers.create({ name, transport: "http", url: gate.url, approval: "always" })
  const { thread } = yield* agentWithThread({ capabilities: { mcp: { toolServerIds: [server.id] } } })
  const { runId } = yield* send(thread.id, `/tool mcp__${name}__echo ${JSON.stringify({ text: "hi" })}`)
  const [interaction] = yield* pendingOf(runId)
  assert.isDefined(interaction, "the run parked on an approval")
  return { threadId: thread.id, runId, interactionId: interaction.id }
})

const runStatus = (runId: string) =>
  Effect.map(Effect.flatMap(request("GET", `/v1/runs/${runId}`), (r) => expectOk(r, 200, Run)), (run) => run.status)

const interactionState = (id: string) =>
  Effect.map(
    Effect.flatMap(request("GET", `/v1/interactions/${id}`), (r) => expectOk(r, 200, Interaction)),
    (i) => [i.status, i.decision]
  )

const answer = (requestId: string, optionId: "approve" | "deny") => ({ inputResponses: [{ requestId, optionId }] })

const connected = Effect.gen(function*() {
  const account = uniqueName("acme")
  return yield* Harness.connect({ account, repositories: [`${account}/api`] })
})

const cases: ReadonlyArray<PostCase> = [
  {
    route: "POST /v1/agents",
    prepare: Effect.succeed(json("/v1/agents", { context: "one" }, { context: "two" }, count(Collection.agents)))
  },
  {
    route: "POST /v1/secrets",
    prepare: Effect.sync(() =>
      json(
        "/v1/secrets",
        { name: uniqueName("idem-secret"), value: "first-value" },
        { name: uniqueName("idem-secret"), value: "other-value" },
        count(Collection.secrets)
      )
    )
  },
  {
    route: "POST /v1/environments",
    prepare: Effect.sync(() =>
      json("/v1/environments", { name: uniqueName("idem-env") }, { name: uniqueName("idem-env") }, count(environments))
    )
  },
  {
    // The replay answers the first token again (from the sealed record) and rotates nothing.
    route: "POST /v1/environments/{id}/rotate-token",
    prepare: Effect.map(
      environments.create({ name: uniqueName("idem-env-rotate") }),
      (environment) =>
        json(
          `/v1/environments/${environment.id}/rotate-token`,
          undefined,
          undefined,
          configVersion(environments, environment.id)
        )
    )
  },
  {
    route: "POST /v1/secrets/{id}/rotate",
    prepare: Effect.map(
      Collection.secrets.create({ name: uniqueName("idem-rotate"), value: "v1" }),
      (secret) =>
        json(
          `/v1/secrets/${secret.id}/rotate`,
          { value: "v2" },
          { value: "v3" },
          configVersion(Collection.secrets, secret.id)
        )
    )
  },
  {
    route: "POST /v1/secret-contexts",
    prepare: Effect.map(
      Collection.secrets.create({ name: uniqueName("idem-ctx-secret"), value: "v" }),
      (secret) => {
        const context = (env: string) => ({
          name: uniqueName("idem-ctx"),
          projections: [{ type: "workspace_env", secretId: secret.id, env }]
        })
        return json("/v1/secret-contexts", context("TOKEN"), context("OTHER_TOKEN"), count(Collection.secretContexts))
      }
    )
  },
  {
    route: "POST /v1/tool-approval-hooks",
    prepare: Effect.map(hookUrl, (url) =>
      json(
        "/v1/tool-approval-hooks",
        { name: uniqueName("idem-hook"), url, secret: "whsec_first_signing_secret" },
        { name: uniqueName("idem-hook"), url, secret: "whsec_other_signing_secret" },
        count(Collection.toolApprovalHooks)
      ))
  },
  {
    route: "POST /v1/tool-approval-hooks/{id}/rotate-secret",
    prepare: Effect.gen(function*() {
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "rotating",
        url: yield* hookUrl,
        secret: "s1_signing_secret"
      })
      return json(
        `/v1/tool-approval-hooks/${hook.id}/rotate-secret`,
        { secret: "s2_signing_secret" },
        { secret: "s3_signing_secret" },
        configVersion(Collection.toolApprovalHooks, hook.id)
      )
    })
  },
  {
    route: "POST /v1/tool-approval-hooks/{id}/test",
    prepare: Effect.gen(function*() {
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "tested",
        url: yield* hookUrl,
        secret: "s1_signing_secret"
      })
      return json(`/v1/tool-approval-hooks/${hook.id}/test`, undefined, undefined, deliveries)
    })
  },
  {
    route: "POST /v1/result-handlers",
    prepare: Effect.map(hookUrl, (url) =>
      json(
        "/v1/result-handlers",
        { kind: "artifact", name: "first", url, secret: "rh_first_signing_secret" },
        { kind: "artifact", name: "other", url, secret: "rh_other_signing_secret" },
        count(Collection.resultHandlers)
      ))
  },
  {
    route: "POST /v1/result-handlers/{id}/rotate-secret",
    prepare: Effect.gen(function*() {
      const handler = yield* Collection.resultHandlers.create({
        kind: "artifact",
        name: "rotating",
        url: yield* hookUrl,
        secret: "rh_1_signing_secret"
      })
      return json(
        `/v1/result-handlers/${handler.id}/rotate-secret`,
        { secret: "rh_2_signing_secret" },
        { secret: "rh_3_signing_secret" },
        configVersion(Collection.resultHandlers, handler.id)
      )
    })
  },
  {
    route: "POST /v1/tool-servers",
    prepare: Effect.map(hookUrl, (url) =>
      json(
        "/v1/tool-servers",
        { name: uniqueName("idem-ts"), transport: "http", url },
        { name: uniqueName("idem-ts"), transport: "sse", url },
        count(Collection.toolServers)
      ))
  },
  {
    route: "POST /v1/tool-servers/{id}/test",
    prepare: Effect.gen(function*() {
      const peer = yield* McpServers.bearerServer("idem-token-0123", ["lookup"])
      const secret = yield* Collection.secrets.create({ name: uniqueName("idem-mcp-token"), value: "idem-token-0123" })
      const server = yield* Collection.toolServers.create({
        name: uniqueName("idem-tested"),
        transport: "http",
        url: peer.url,
        auth: { type: "bearer", secretId: secret.id }
      })
      // Every request the MCP server received: the test's handshake and listing.
      return json(
        `/v1/tool-servers/${server.id}/test`,
        undefined,
        undefined,
        Effect.sync(() => peer.authorizations().length)
      )
    })
  },
  {
    route: "POST /v1/http-connections",
    prepare: Effect.sync(() =>
      json(
        "/v1/http-connections",
        { name: uniqueName("idem-hc"), spec: tinySpec },
        { name: uniqueName("idem-hc"), spec: tinySpec, trusted: true },
        count(Collection.httpConnections)
      )
    )
  },
  {
    route: "POST /v1/http-connections/{id}/test",
    prepare: Effect.map(
      Collection.httpConnections.create({ name: uniqueName("idem-hc-tested"), spec: tinySpec }),
      // An inline document is parsed where it is stored: nothing outside shows a second test.
      (connection) => json(`/v1/http-connections/${connection.id}/test`, undefined, undefined, null)
    )
  },
  {
    route: "POST /v1/codehost-connections/authorize",
    prepare: Effect.succeed(
      json(
        "/v1/codehost-connections/authorize",
        { name: "first" },
        { name: "other" },
        count(codehostConnections)
      )
    )
  },
  {
    route: "POST /v1/codehost-connections/{id}/sync",
    prepare: Effect.map(
      connected,
      ({ id }) => json(`/v1/codehost-connections/${id}/sync`, undefined, undefined, githubRequests)
    )
  },
  {
    route: "POST /v1/codehost-connections/{id}/test",
    prepare: Effect.map(
      connected,
      ({ id }) => json(`/v1/codehost-connections/${id}/test`, undefined, undefined, githubRequests)
    )
  },
  {
    route: "POST /v1/files",
    prepare: Effect.succeed({
      // A new multipart boundary each time: the same file is the same name, media type and bytes.
      send: (key, other) =>
        Uploads.post(
          Uploads.form([{ filename: "note.txt", type: "text/plain", data: other ? "other words" : "plain words" }]),
          { headers: idem(key) }
        ),
      conflicts: true,
      effects: count(files)
    })
  },
  {
    route: "POST /v1/interactions/{id}/resolve",
    prepare: Effect.map(parkedRun, ({ interactionId }) =>
      json(
        `/v1/interactions/${interactionId}/resolve`,
        answer(interactionId, "approve"),
        answer(interactionId, "deny"),
        interactionState(interactionId)
      ))
  },
  {
    route: "POST /v1/runs/{rootRunId}/interactions/resolve",
    prepare: Effect.map(parkedRun, ({ runId, interactionId }) =>
      json(
        `/v1/runs/${runId}/interactions/resolve`,
        { items: [{ id: interactionId, ...answer(interactionId, "approve") }] },
        { items: [{ id: interactionId, ...answer(interactionId, "deny") }] },
        interactionState(interactionId)
      ))
  },
  {
    route: "POST /v1/runs/{id}/cancel",
    prepare: Effect.map(
      parkedRun,
      ({ runId }) => json(`/v1/runs/${runId}/cancel`, undefined, undefined, runStatus(runId))
    )
  },
  {
    route: "POST /v1/threads/{id}/cancel",
    prepare: Effect.map(
      parkedRun,
      ({ threadId, runId }) => json(`/v1/threads/${threadId}/cancel`, undefined, undefined, runStatus(runId))
    )
  }
]

/**
 * Keyed POSTs this table leaves to other files: threads (201, `created: false` on a replay), messages and
 * runs (the key in the body too) in Idempotency.test.ts; the API keys routes (an admin key) with their own.
 */
const coveredElsewhere = [
  "POST /v1/threads",
  "POST /v1/threads/{id}/messages",
  "POST /v1/runs",
  "POST /v1/api-keys",
  "POST /v1/api-keys/{id}/revoke"
]

/** A POST that honours no key: it stores nothing and reaches nothing. */
const unkeyed = ["POST /v1/agents/validate"]

const TestLayer = Layer.merge(Harness.layer(), HookServer.layer)

TestServer.suiteWith(TestLayer)("Idempotency-Key on every POST", (it) => {
  it.effect.each(cases)(
    "$route: the same key and body answer the first answer and act once; another body is 409",
    (c) =>
      Effect.gen(function*() {
        const prepared = yield* c.prepare
        const key = `idem ${c.route}`
        const before = prepared.effects === null ? null : yield* prepared.effects
        const first = yield* prepared.send(key, false)
        assert.strictEqual(first.status, 200, first.text)
        const after = prepared.effects === null ? null : yield* prepared.effects
        if (prepared.effects !== null) assert.notDeepEqual(after, before, "the first request acts")

        // Later: a second run would stamp other times.
        yield* TestClock.adjust("1 second")
        const replay = yield* prepared.send(key, false)
        assert.strictEqual(replay.status, first.status, replay.text)
        assert.deepStrictEqual(replay.json, first.json)
        if (prepared.effects !== null) assert.deepStrictEqual(yield* prepared.effects, after, "the replay acts not")

        if (prepared.conflicts) {
          const conflict = yield* prepared.send(key, true)
          const error = yield* expectError(conflict, 409, "api_error", "idempotency_key_conflict")
          assert.include(error.message, "Idempotency-Key")
          if (prepared.effects !== null) assert.deepStrictEqual(yield* prepared.effects, after, "the conflict acts not")
          // The record is untouched: the first body still replays.
          const again = yield* prepared.send(key, false)
          assert.deepStrictEqual([again.status, again.json], [first.status, first.json])
        }
      }).pipe(Effect.scoped)
  )

  it.effect("a retry while the first request still runs is 503 service_unavailable; once it answered, it replays", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const hooks = yield* HookServer
      const hook = yield* Collection.toolApprovalHooks.create({
        name: "held",
        url: yield* hookUrl,
        secret: "s1_signing_secret"
      })
      const path = `/v1/tool-approval-hooks/${hook.id}/test`
      const before = (yield* hooks.received).length
      yield* hooks.answerWith(hold)
      const first = yield* Effect.forkChild(api.request("POST", path, { headers: idem("held-test") }))
      yield* hooks.awaitRequest(before + 1)

      const pending = yield* api.request("POST", path, { headers: idem("held-test") })
      const error = yield* expectError(pending, 503, "api_error", "service_unavailable")
      assert.include(error.message, "Idempotency-Key")
      yield* hooks.releaseHeld
      const answered = yield* Fiber.join(first)
      assert.strictEqual(answered.status, 200, answered.text)
      const replay = yield* api.request("POST", path, { headers: idem("held-test") })
      assert.deepStrictEqual([replay.status, replay.json], [200, answered.json])
      assert.strictEqual((yield* hooks.received).length, before + 1, "one delivery for the three requests")
    }))

  it.effect("a key of more than 255 characters is 400 naming Idempotency-Key, and nothing is stored", () =>
    Effect.gen(function*() {
      const before = yield* Collection.secrets.ids()
      const reply = yield* request("POST", "/v1/secrets", {
        body: { name: uniqueName("idem-long"), value: "v" },
        headers: idem("k".repeat(256))
      })
      const error = yield* expectError(reply, 400, "invalid_request_error", "invalid_request_error")
      assert.strictEqual(error.details?.["field"], "Idempotency-Key")
      assert.deepStrictEqual(yield* Collection.secrets.ids(), before)
    }))

  it.effect("the same key on two resources is two requests: the path names the resource", () =>
    Effect.gen(function*() {
      const one = yield* Collection.secrets.create({ name: uniqueName("idem-two"), value: "v1" })
      const two = yield* Collection.secrets.create({ name: uniqueName("idem-two"), value: "v1" })
      const rotate = (id: string) =>
        Effect.flatMap(
          request("POST", `/v1/secrets/${id}/rotate`, { body: { value: "v2" }, headers: idem("shared") }),
          (reply) => expectOk(reply, 200, Secret)
        )
      assert.strictEqual((yield* rotate(one.id)).id, one.id)
      assert.strictEqual((yield* rotate(two.id)).id, two.id)
      assert.deepStrictEqual(
        [
          (yield* Collection.secrets.read(one.id)).configVersion,
          (yield* Collection.secrets.read(two.id)).configVersion
        ],
        [one.configVersion + 1, two.configVersion + 1]
      )
    }))

  it.effect("without a key every request acts: two creates are two hooks", () =>
    Effect.gen(function*() {
      const url = yield* hookUrl
      const before = (yield* Collection.toolApprovalHooks.ids()).length
      const body = { name: "twice", url, secret: "s_signing_secret" }
      const first = yield* Collection.toolApprovalHooks.create(body)
      const second = yield* Collection.toolApprovalHooks.create(body)
      assert.notStrictEqual(first.id, second.id)
      assert.strictEqual((yield* Collection.toolApprovalHooks.ids()).length, before + 2)
    }))
})

// ---- the contract --------------------------------------------------------------

const spec = OpenApi.fromApi(Api)

/** Every POST behind an API key, by name, with what it declares. */
const keyedPosts = Object.entries(spec.paths).flatMap(([path, item]) => {
  const op = item.post
  return op === undefined || op.security.length === 0 ? [] : [{ name: `POST ${path}`, op }]
})

describe("the contract of Idempotency-Key", () => {
  it("every keyed POST but validate declares the header and answers 409 and 503", () => {
    const missing = keyedPosts.filter(({ name }) => !unkeyed.includes(name)).flatMap(({ name, op }) => {
      const header = op.parameters.some((p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key")
      return [
        ...(header ? [] : [`${name}: no Idempotency-Key header`]),
        ...[409, 503].filter((status) => op.responses[status] === undefined).map((s) => `${name}: no ${s}`)
      ]
    })
    assert.deepStrictEqual(missing, [])
  })

  it("the table covers every keyed POST", () => {
    const tested = [...cases.map((c) => c.route), ...coveredElsewhere, ...unkeyed].sort()
    assert.deepStrictEqual(tested, keyedPosts.map((p) => p.name).sort())
  })
})

/**
 * The agents routes (spec 2.1, 4.1 and 7): create, validate, read, list,
 * update and delete, against the whole service on a real database.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Agent } from "../../domain/Agent.ts"
import { Deleted, Page } from "../../domain/Page.ts"
import * as Collection from "../support/Collection.ts"
import {
  byOtherTenants,
  call,
  expectDenied,
  expectInvalid,
  expectNotFound,
  resourceRoutes
} from "../support/Refusals.ts"
import * as TestServer from "../support/TestServer.ts"

// ---- helpers ----------------------------------------------------------------

const { nowIso, request } = TestServer
const { post, patch, get, create: createAgent, update: patchAgent } = Collection.agents

const AgentPage = Page(Agent)

const FieldErrors = Schema.Array(
  Schema.Struct({ field: Schema.String, location: Schema.String, message: Schema.String })
)

/** The `details.errors[].field` of a schema-level 400. */
const errorFields = (details: Readonly<Record<string, unknown>> | undefined): ReadonlyArray<string> =>
  Schema.decodeUnknownSync(FieldErrors)(details?.["errors"]).map((e) => e.field)

/** A managed workspace reaching `allowDomains` only. */
const restricted = (allowDomains: ReadonlyArray<string>) => ({
  workspace: { type: "managed", network: { mode: "restricted", allowDomains } }
})

/** Create refuses the body with a 400 naming `field`. */
const rejectsCreate = (body: unknown, field: string, code = "invalid_request_error") =>
  Effect.flatMap(post(body), (reply) => expectInvalid(reply, field, code))

/** A schema-level refusal: `details.field` and `details.errors` name the path. */
const rejectsCreateSchema = (body: unknown, field: string) =>
  Effect.gen(function*() {
    const error = yield* rejectsCreate(body, field)
    assert.include(errorFields(error.details), field)
    assert.include(error.message, field)
    return error
  })

/**
 * A schema-level refusal inside a union (several alternatives report): the
 * offending path is among `details.errors`, and `details.field` is the first.
 */
const rejectsCreateUnion = (body: unknown, field: string) =>
  Effect.gen(function*() {
    const reply = yield* post(body)
    const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", "invalid_request_error")
    const fields = errorFields(error.details)
    assert.include(fields, field, reply.text)
    assert.strictEqual(error.details?.["field"], fields[0])
    assert.include(error.message, field)
  })

const defaultPolicies = {
  maxStepsDefault: null,
  maxDurationMsDefault: null,
  mediaFidelity: "standard",
  dataHandling: "standard"
} as const

const defaultArtifacts = { stream: { urls: "durable-only" } } as const

const resolvedManaged = {
  type: "managed",
  filesystem: true,
  shell: true,
  documents: false,
  mediaEditing: false
} as const

/** Every agent of the key's workspace, walking all pages. */
const listAll = (key: string = TestServer.Keys.a) =>
  Effect.gen(function*() {
    const out: Array<Agent> = []
    let cursor: string | null = null
    do {
      const path: string = cursor === null
        ? "/v1/agents?limit=100"
        : `/v1/agents?limit=100&cursor=${encodeURIComponent(cursor)}`
      const page = yield* TestServer.expectOk(yield* request("GET", path, { key }), 200, AgentPage)
      out.push(...page.data)
      cursor = page.nextCursor
    } while (cursor !== null)
    return out
  })

const repeat = (char: string, n: number) => char.repeat(n)

/** Every route that addresses an agent by id. */
const routes = resourceRoutes(Collection.agents.path, { band: "lite" })

// ---- the agents routes on one shared server ---------------------------------

// The service's default body cap (1 MiB), so the context caps are reachable.
TestServer.suite({ maxBodyBytes: 1_048_576 })("agents", (it) => {
  it.effect("POST /v1/agents with an empty body answers 200 with every field resolved to its default", () =>
    Effect.gen(function*() {
      const now = yield* nowIso
      const reply = yield* post({})
      const agent = yield* TestServer.expectOk(reply, 200, Agent)
      assert.match(agent.id, /^agent_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(reply.json, {
        id: agent.id,
        object: "agent",
        context: [],
        band: "core",
        capabilities: {},
        artifacts: defaultArtifacts,
        workspace: null,
        approvals: null,
        policies: defaultPolicies,
        metadata: {},
        configVersion: 1,
        createdAt: now,
        updatedAt: now
      })
      assert.match(reply.headers.get("x-request-id") ?? "", /^req_/)
      const read = yield* get(agent.id)
      assert.strictEqual(read.status, 200)
      assert.deepStrictEqual(read.json, reply.json)
    }))

  it.effect("POST /v1/agents echoes a full configuration, resolved", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 second")
      const now = yield* nowIso
      const body = {
        context: [{ id: "persona", content: "You are terse." }, { content: "Answer in French." }],
        band: "lite",
        capabilities: {
          web: false,
          browser: false,
          userInteraction: true,
          subagents: false,
          media: false,
          skills: [
            {
              name: "summarize",
              description: "Summaries",
              body: "Summarize.",
              frontmatter: { a: 1 },
              metadata: { v: "2" }
            },
            { name: "translate", description: "Translations", body: "Translate." }
          ]
        },
        artifacts: {
          stream: { urls: "durable-only" },
          exports: { include: { generatedDeliverables: true, workspaceExports: false, browserScreenshots: true } }
        },
        workspace: {
          type: "managed",
          resources: "large",
          lifecycle: { idleMinutes: 30, retentionDays: 7 },
          network: { mode: "restricted", allowDomains: ["example.com"] },
          previews: { enabled: true, ports: [3000, 8080] },
          seed: { type: "git", url: "https://example.com/repo.git", revision: "main", depth: 1 },
          services: [{ name: "web", command: "npm start", cwd: "app", port: 3000, restartPolicy: "on-resume" }]
        },
        approvals: { autoAllow: ["read_file", "svc-search"] },
        policies: {
          maxStepsDefault: 50,
          maxDurationMsDefault: 60_000,
          mediaFidelity: "standard",
          dataHandling: "strict"
        },
        metadata: { team: "core", env: "prod" }
      }
      const reply = yield* post(body)
      const agent = yield* TestServer.expectOk(reply, 200, Agent)
      assert.deepStrictEqual(reply.json, {
        ...body,
        id: agent.id,
        object: "agent",
        workspace: { ...body.workspace, filesystem: true, shell: true, documents: false, mediaEditing: false },
        configVersion: 1,
        createdAt: now,
        updatedAt: now
      })
      assert.deepStrictEqual((yield* get(agent.id)).json, reply.json)
    }))

  it.effect("band defaults to core, accepts lite, refuses an unknown band and the unavailable frontier band", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* createAgent({})).band, "core")
      assert.strictEqual((yield* createAgent({ band: "lite" })).band, "lite")
      assert.strictEqual((yield* createAgent({ band: "core" })).band, "core")
      yield* rejectsCreateSchema({ band: "ultra" }, "band")
      const frontier = yield* rejectsCreate({ band: "frontier" }, "band")
      assert.include(frontier.message, "frontier")
      assert.deepStrictEqual(frontier.details, { field: "band" })
    }))

  it.effect("unknown body fields are refused at every depth, naming the field path", () =>
    Effect.gen(function*() {
      const before = yield* listAll()
      yield* rejectsCreateSchema({ foo: 1 }, "foo")
      yield* rejectsCreateSchema({ capabilities: { foo: true } }, "capabilities.foo")
      yield* rejectsCreateSchema({ capabilities: { browser: { tabs: false, foo: 1 } } }, "capabilities.browser.foo")
      yield* rejectsCreateSchema(
        { capabilities: { skills: [{ name: "s", description: "d", body: "b", x: 1 }] } },
        "capabilities.skills[0].x"
      )
      yield* rejectsCreateSchema({ context: [{ content: "x", extra: 1 }] }, "context[0].extra")
      yield* rejectsCreateSchema({ artifacts: { stream: { urls: "durable-only", foo: 1 } } }, "artifacts.stream.foo")
      yield* rejectsCreateSchema({ workspace: { type: "managed", foo: 1 } }, "workspace.foo")
      yield* rejectsCreateSchema({ workspace: { type: "remote", environmentId: "env_1", foo: 1 } }, "workspace.foo")
      yield* rejectsCreateSchema({ approvals: { autoAllow: [], foo: 1 } }, "approvals.foo")
      yield* rejectsCreateSchema({ policies: { foo: 1 } }, "policies.foo")
      const error = yield* rejectsCreate({ foo: 1 }, "foo")
      assert.deepStrictEqual(error.details, {
        field: "foo",
        errors: [{ field: "foo", location: "body", message: "Expected no excess property" }]
      })
      // Nothing was written by any refused create.
      assert.deepStrictEqual(yield* listAll(), before)
    }))

  it.effect("create-only nullability: policies.mediaFidelity/dataHandling, artifacts and workspace refuse null", () =>
    Effect.gen(function*() {
      yield* rejectsCreateSchema({ policies: { mediaFidelity: null } }, "policies.mediaFidelity")
      yield* rejectsCreateSchema({ policies: { dataHandling: null } }, "policies.dataHandling")
      yield* rejectsCreateSchema({ artifacts: null }, "artifacts")
      yield* rejectsCreateSchema({ workspace: null }, "workspace")
      yield* rejectsCreateSchema({ approvals: null }, "approvals")
      // maxStepsDefault and maxDurationMsDefault accept null on create.
      const agent = yield* createAgent({ policies: { maxStepsDefault: null, maxDurationMsDefault: null } })
      assert.deepStrictEqual(agent.policies, defaultPolicies)
    }))

  it.effect("context: a string is one block, \"\" and [] are empty, blocks keep their ids and order", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* createAgent({ context: "Be brief." })).context, [{ content: "Be brief." }])
      assert.deepStrictEqual((yield* createAgent({ context: "" })).context, [])
      assert.deepStrictEqual((yield* createAgent({ context: [] })).context, [])
      const blocks = [{ content: "one" }, { id: "b", content: "two" }, { id: "c", content: "" }, { content: "four" }]
      assert.deepStrictEqual((yield* createAgent({ context: blocks })).context, blocks)
    }))

  it.effect("context caps: 100 blocks, 32,768 characters a block, 131,072 in all, unique block ids", () =>
    Effect.gen(function*() {
      const hundred = Array.from({ length: 100 }, (_, i) => ({ id: `b${i}`, content: "x" }))
      assert.deepStrictEqual((yield* createAgent({ context: hundred })).context, hundred)
      const tooMany = yield* rejectsCreate({ context: [...hundred, { content: "y" }] }, "context")
      assert.include(tooMany.message, "100")

      const fullBlock = repeat("a", 32_768)
      assert.deepStrictEqual((yield* createAgent({ context: [{ content: "x" }, { content: fullBlock }] })).context, [
        { content: "x" },
        { content: fullBlock }
      ])
      assert.deepStrictEqual((yield* createAgent({ context: fullBlock })).context, [{ content: fullBlock }])
      yield* rejectsCreate({ context: [{ content: "x" }, { content: fullBlock + "a" }] }, "context[1]")
      yield* rejectsCreate({ context: fullBlock + "a" }, "context")

      const fourFull = Array.from({ length: 4 }, () => ({ content: fullBlock }))
      assert.strictEqual((yield* createAgent({ context: fourFull })).context.length, 4)
      const overAggregate = yield* rejectsCreate({ context: [...fourFull, { content: "b" }] }, "context")
      assert.include(overAggregate.message, "131072")

      const duplicate = yield* rejectsCreate(
        { context: [{ id: "a", content: "x" }, { id: "a", content: "y" }] },
        "context[1].id"
      )
      assert.include(duplicate.message, "'a'")
      yield* rejectsCreate(
        {
          context: [{ id: "a", content: "x" }, { content: "y" }, { id: "b", content: "z" }, { id: "b", content: "w" }]
        },
        "context[3].id"
      )
      yield* rejectsCreateSchema({ context: [{ id: "", content: "x" }] }, "context[0].id")
      yield* rejectsCreateSchema({ context: [{ id: repeat("i", 129), content: "x" }] }, "context[0].id")
      assert.deepStrictEqual((yield* createAgent({ context: [{ id: repeat("i", 128), content: "x" }] })).context, [
        { id: repeat("i", 128), content: "x" }
      ])
    }))

  it.effect("metadata caps: 50 keys, keys 1-40 characters, string values of at most 500 characters", () =>
    Effect.gen(function*() {
      const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, `v${i}`]))
      assert.deepStrictEqual((yield* createAgent({ metadata: fifty })).metadata, fifty)
      yield* rejectsCreate({ metadata: { ...fifty, k50: "v" } }, "metadata")
      const edge = { [repeat("k", 40)]: repeat("v", 500), x: "" }
      assert.deepStrictEqual((yield* createAgent({ metadata: edge })).metadata, edge)
      yield* rejectsCreateSchema({ metadata: { [repeat("k", 41)]: "v" } }, `metadata.${repeat("k", 41)}`)
      yield* rejectsCreateSchema({ metadata: { "": "v" } }, "metadata.")
      yield* rejectsCreateSchema({ metadata: { k: repeat("v", 501) } }, "metadata.k")
      yield* rejectsCreateSchema({ metadata: { k: 1 } }, "metadata.k")
      yield* rejectsCreateSchema({ metadata: { k: { nested: "no" } } }, "metadata.k")
    }))

  it.effect("workspace booleans resolve: filesystem true, shell = filesystem, documents and mediaEditing false", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* createAgent({ workspace: { type: "managed" } })).workspace, resolvedManaged)
      assert.deepStrictEqual((yield* createAgent({ workspace: { type: "managed", shell: false } })).workspace, {
        ...resolvedManaged,
        shell: false
      })
      assert.deepStrictEqual(
        (yield* createAgent({ workspace: { type: "managed", documents: false, mediaEditing: false } })).workspace,
        resolvedManaged
      )
    }))

  it.effect("workspace rules: shell needs filesystem, a workspace opens, previews serve something, remote refuses secretContexts and names an environment; documents and mediaEditing are unconfigured", () =>
    Effect.gen(function*() {
      const before = yield* listAll()
      yield* rejectsCreate({ workspace: { type: "managed", filesystem: false, shell: true } }, "workspace.shell")
      // A workspace with neither filesystem nor shell would never open: refused, not stored.
      yield* rejectsCreate({ workspace: { type: "managed", filesystem: false } }, "workspace.filesystem")
      yield* rejectsCreate(
        { workspace: { type: "managed", previews: { enabled: false, ports: [3000] } } },
        "workspace.previews.ports"
      )
      yield* rejectsCreate(
        { workspace: { type: "remote", environmentId: "env_1", filesystem: false, shell: true } },
        "workspace.shell"
      )
      yield* rejectsCreate(
        { workspace: { type: "remote", environmentId: "env_1", secretContexts: ["ctx"] } },
        "workspace.secretContexts"
      )
      yield* rejectsCreate(
        { workspace: { type: "remote", environmentId: "env_1", secretContexts: [] } },
        "workspace.secretContexts"
      )
      yield* rejectsCreate(
        { workspace: { type: "managed", mediaEditing: true } },
        "workspace.mediaEditing",
        "managed_media_editing_unconfigured"
      )
      // Remote workspaces (issue 31) name an environment of the caller's workspace (test/api/Environments.test.ts).
      yield* rejectsCreate({ workspace: { type: "remote", environmentId: "env_1" } }, "workspace.environmentId")
      yield* rejectsCreate(
        { workspace: { type: "managed", documents: true } },
        "workspace.documents",
        "managed_documents_unconfigured"
      )
      yield* rejectsCreateSchema({ workspace: { type: "remote" } }, "workspace.environmentId")
      yield* rejectsCreateUnion(
        { workspace: { type: "managed", network: { mode: "restricted" } } },
        "workspace.network.allowDomains"
      )
      yield* rejectsCreateSchema({ workspace: { type: "managed", resources: "huge" } }, "workspace.resources")
      assert.deepStrictEqual(yield* listAll(), before)
    }))

  it.effect("capabilities without a runtime on this deployment are refused with their *_unconfigured codes", () =>
    Effect.gen(function*() {
      const before = yield* listAll()
      yield* rejectsCreate({ capabilities: { browser: true } }, "capabilities.browser", "managed_browser_unconfigured")
      yield* rejectsCreate(
        { capabilities: { browser: { tabs: true } } },
        "capabilities.browser",
        "managed_browser_unconfigured"
      )
      yield* rejectsCreate(
        { capabilities: { browser: { authenticated: { profileKey: "p" }, files: true } } },
        "capabilities.browser",
        "managed_browser_unconfigured"
      )
      yield* rejectsCreate({ capabilities: { media: true } }, "capabilities.media", "media_runtime_unconfigured")
      yield* rejectsCreate(
        { capabilities: { media: { image: true } } },
        "capabilities.media.image",
        "media_runtime_unconfigured"
      )
      assert.deepStrictEqual(yield* listAll(), before)
      // Media viewing and spatial fidelity have their runtime here (view_media, docs/guide/media-view.md).
      const viewing = yield* createAgent({
        capabilities: { mediaView: { output: "analysis" } },
        policies: { mediaFidelity: "spatial" }
      })
      assert.deepStrictEqual(viewing.capabilities, { mediaView: { output: "analysis" } })
      assert.strictEqual(viewing.policies.mediaFidelity, "spatial")
      // The same flags switched off are accepted and echoed.
      const off = { web: false, browser: false, media: false, subagents: false, userInteraction: false }
      assert.deepStrictEqual((yield* createAgent({ capabilities: off })).capabilities, off)
      // Subagents have a runtime: enabled, they are accepted and echoed (delegate_task, README "Subagents").
      assert.deepStrictEqual((yield* createAgent({ capabilities: { subagents: true } })).capabilities, {
        subagents: true
      })
    }))

  it.effect("codehost needs a managed workspace with filesystem, shell and network; allowedTools excludes blockedTools", () =>
    Effect.gen(function*() {
      const before = yield* listAll()
      const codehost = { connectionId: "chc_1" }
      yield* rejectsCreate({ capabilities: { codehost } }, "capabilities.codehost")
      yield* rejectsCreate(
        { capabilities: { codehost }, workspace: { type: "remote", environmentId: "env_1" } },
        "capabilities.codehost"
      )
      yield* rejectsCreate(
        { capabilities: { codehost }, workspace: { type: "managed", filesystem: false } },
        "workspace.filesystem"
      )
      yield* rejectsCreate(
        { capabilities: { codehost }, workspace: { type: "managed", shell: false } },
        "capabilities.codehost"
      )
      yield* rejectsCreate(
        { capabilities: { codehost }, workspace: { type: "managed", network: { mode: "offline" } } },
        "capabilities.codehost"
      )
      yield* rejectsCreate(
        {
          capabilities: { codehost: { ...codehost, allowedTools: ["create_pr"], blockedTools: ["merge_pr"] } },
          workspace: { type: "managed" }
        },
        "capabilities.codehost.blockedTools"
      )
      // A well-formed grant: no code-hosting app backs it on this deployment.
      yield* rejectsCreate(
        {
          capabilities: { codehost: { ...codehost, repositories: ["acme/api"], approval: "always" } },
          workspace: { type: "managed" }
        },
        "capabilities.codehost",
        "codehost_unconfigured"
      )
      assert.deepStrictEqual(yield* listAll(), before)
    }))

  it.effect("skills need unique names; approvals.autoAllow lists canonical tool names", () =>
    Effect.gen(function*() {
      const skill = { name: "summarize", description: "d", body: "b" }
      const duplicate = yield* rejectsCreate(
        { capabilities: { skills: [skill, { ...skill, name: "other" }, { ...skill, body: "again" }] } },
        "capabilities.skills[2].name"
      )
      assert.include(duplicate.message, "summarize")
      yield* rejectsCreate({ approvals: { autoAllow: ["bad name"] } }, "approvals.autoAllow[0]")
      yield* rejectsCreate({ approvals: { autoAllow: ["read_file", repeat("t", 65)] } }, "approvals.autoAllow[1]")
      yield* rejectsCreate({ approvals: { autoAllow: ["read_file", "mcp.tool"] } }, "approvals.autoAllow[1]")
      yield* rejectsCreateSchema({ approvals: { autoAllow: [""] } }, "approvals.autoAllow[0]")
      const approvals = { autoAllow: ["read_file", repeat("t", 64), "svc-search_2"] }
      assert.deepStrictEqual((yield* createAgent({ approvals })).approvals, approvals)
      assert.deepStrictEqual((yield* createAgent({ approvals: {} })).approvals, {})
    }))

  it.effect("POST /v1/agents/validate answers { valid: true } and writes nothing", () =>
    Effect.gen(function*() {
      const before = yield* listAll()
      assert.isAbove(before.length, 0)
      const bodies: ReadonlyArray<unknown> = [
        {},
        { context: "hello", band: "lite", metadata: { a: "b" } },
        { workspace: { type: "managed", shell: false }, capabilities: { userInteraction: true } },
        // Loopback named exactly: reachable on this development deployment (SVC_ALLOW_PRIVATE_URLS).
        restricted(["localhost", "127.0.0.1", "*.example.com"])
      ]
      for (const body of bodies) {
        const reply = yield* request("POST", "/v1/agents/validate", { body })
        assert.strictEqual(reply.status, 200, reply.text)
        assert.deepStrictEqual(reply.json, { valid: true })
      }
      assert.deepStrictEqual(yield* listAll(), before)
    }))

  it.effect("POST /v1/agents/validate refuses an invalid definition with the same 400 as create", () =>
    Effect.gen(function*() {
      const before = yield* listAll()
      const cases: ReadonlyArray<readonly [body: unknown, code: string, field: string]> = [
        [{ foo: 1 }, "invalid_request_error", "foo"],
        [{ capabilities: { foo: true } }, "invalid_request_error", "capabilities.foo"],
        [{ band: "frontier" }, "invalid_request_error", "band"],
        [{ context: [{ id: "a", content: "x" }, { id: "a", content: "y" }] }, "invalid_request_error", "context[1].id"],
        [
          { workspace: { type: "managed", filesystem: false, shell: true } },
          "invalid_request_error",
          "workspace.shell"
        ],
        [
          { workspace: { type: "managed", mediaEditing: true } },
          "managed_media_editing_unconfigured",
          "workspace.mediaEditing"
        ],
        [{ capabilities: { media: { speech: true } } }, "media_runtime_unconfigured", "capabilities.media.speech"],
        [{ workspace: { type: "remote", environmentId: "env_1" } }, "invalid_request_error", "workspace.environmentId"],
        [{ metadata: { k: repeat("v", 501) } }, "invalid_request_error", "metadata.k"],
        // allowDomains that could never be reached, even on this development deployment (SVC_ALLOW_PRIVATE_URLS).
        [restricted(["example.com", "169.254.169.254"]), "invalid_request_error", "workspace.network.allowDomains[1]"],
        [restricted(["metadata.google.internal"]), "invalid_request_error", "workspace.network.allowDomains[0]"],
        [restricted(["localhost", "*.localhost"]), "invalid_request_error", "workspace.network.allowDomains[1]"]
      ]
      for (const [body, code, field] of cases) {
        const viaValidate = yield* expectInvalid(
          yield* request("POST", "/v1/agents/validate", { body }),
          field,
          code
        )
        const viaCreate = yield* expectInvalid(yield* post(body), field, code)
        assert.strictEqual(viaValidate.type, viaCreate.type)
        assert.strictEqual(viaValidate.code, viaCreate.code)
        assert.strictEqual(viaValidate.message, viaCreate.message)
        assert.deepStrictEqual(viaValidate.details, viaCreate.details)
        assert.notStrictEqual(viaValidate.request_id, viaCreate.request_id)
      }
      assert.deepStrictEqual(yield* listAll(), before)
    }))

  it.effect("PATCH: partial updates, replace semantics, carry-forward, merges, nulls and configVersion", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 minute")
      const createdAt = yield* nowIso
      const created = yield* createAgent({
        context: [{ id: "persona", content: "You are terse." }],
        band: "lite",
        capabilities: { userInteraction: true },
        artifacts: { stream: { urls: "durable-only" }, exports: { include: { browserDownloads: true } } },
        workspace: { type: "managed", resources: "large", network: { mode: "restricted", allowDomains: ["a.com"] } },
        approvals: { autoAllow: ["read_file"] },
        policies: {
          maxStepsDefault: 50,
          maxDurationMsDefault: 60_000,
          mediaFidelity: "standard",
          dataHandling: "strict"
        },
        metadata: { team: "core", env: "prod" }
      })
      assert.strictEqual(created.configVersion, 1)
      assert.strictEqual(created.createdAt, createdAt)

      // An empty patch and a patch restating the configuration change nothing.
      yield* TestClock.adjust("1 second")
      const empty = yield* patch(created.id, {})
      assert.strictEqual(empty.status, 200)
      assert.deepStrictEqual(empty.json, created)
      const restated = yield* patchAgent(created.id, {
        context: [{ id: "persona", content: "You are terse." }],
        band: "lite",
        capabilities: { userInteraction: true },
        workspace: {
          type: "managed",
          resources: "large",
          network: { mode: "restricted", allowDomains: ["a.com"] },
          filesystem: true
        },
        policies: { mediaFidelity: "standard" },
        metadata: { team: "core" }
      })
      assert.deepStrictEqual(restated, created)

      // Metadata-only: merged per key, null deletes, configVersion unchanged.
      yield* TestClock.adjust("1 second")
      let at = yield* nowIso
      let current = yield* patchAgent(created.id, { metadata: { env: null, owner: "ana", missing: null } })
      assert.deepStrictEqual(current, { ...created, metadata: { team: "core", owner: "ana" }, updatedAt: at })
      assert.deepStrictEqual(yield* TestServer.expectOk(yield* get(created.id), 200, Agent), current)

      // Each configuration edit increments configVersion by one and changes only what it names.
      const step = (body: unknown, expected: (previous: Agent) => Agent) =>
        Effect.gen(function*() {
          yield* TestClock.adjust("1 second")
          at = yield* nowIso
          const previous = current
          current = yield* patchAgent(created.id, body)
          assert.deepStrictEqual(current, {
            ...expected(previous),
            configVersion: previous.configVersion + 1,
            updatedAt: at
          })
          assert.deepStrictEqual(yield* TestServer.expectOk(yield* get(created.id), 200, Agent), current)
        })

      yield* step({ context: "New persona." }, (p) => ({ ...p, context: [{ content: "New persona." }] }))
      yield* step({ band: "core" }, (p) => ({ ...p, band: "core" }))
      // capabilities replace: omitted keys are gone.
      yield* step(
        { capabilities: { userInteraction: false } },
        (p) => ({ ...p, capabilities: { userInteraction: false } })
      )
      // workspace replaces: omitted sub-fields are gone.
      yield* step({ workspace: { type: "managed", resources: "small" } }, (p) => ({
        ...p,
        workspace: { ...resolvedManaged, resources: "small" }
      }))
      yield* step({ workspace: { type: "managed", documents: false } }, (p) => ({ ...p, workspace: resolvedManaged }))
      yield* step({ workspace: { type: "managed", resources: "large" } }, (p) => ({
        ...p,
        workspace: { ...resolvedManaged, resources: "large" }
      }))
      yield* step({ workspace: { type: "managed", shell: false } }, (p) => ({
        ...p,
        workspace: { ...resolvedManaged, shell: false }
      }))
      // policies patch per field; null on mediaFidelity/dataHandling restores 'standard'.
      yield* step(
        { policies: { maxStepsDefault: 10 } },
        (p) => ({ ...p, policies: { ...p.policies, maxStepsDefault: 10 } })
      )
      yield* step({ policies: { maxDurationMsDefault: null, mediaFidelity: null, dataHandling: null } }, (p) => ({
        ...p,
        policies: {
          maxStepsDefault: 10,
          maxDurationMsDefault: null,
          mediaFidelity: "standard",
          dataHandling: "standard"
        }
      }))
      yield* step({ policies: { mediaFidelity: "standard", dataHandling: "strict" } }, (p) => ({
        ...p,
        policies: { maxStepsDefault: 10, maxDurationMsDefault: null, mediaFidelity: "standard", dataHandling: "strict" }
      }))
      yield* step({ policies: null }, (p) => ({ ...p, policies: defaultPolicies }))
      // artifacts null restores the default projection; approvals and workspace null clear.
      yield* step({ artifacts: null }, (p) => ({ ...p, artifacts: defaultArtifacts }))
      yield* step({ approvals: null }, (p) => ({ ...p, approvals: null }))
      yield* step({ workspace: null }, (p) => ({ ...p, workspace: null }))
      // Nothing to carry forward from a cleared workspace.
      yield* step({ workspace: { type: "managed" } }, (p) => ({ ...p, workspace: resolvedManaged }))
      yield* step({ context: [] }, (p) => ({ ...p, context: [] }))
      yield* step({ context: "again" }, (p) => ({ ...p, context: [{ content: "again" }] }))
      yield* step({ context: "" }, (p) => ({ ...p, context: [] }))
      yield* step({ capabilities: {} }, (p) => ({ ...p, capabilities: {} }))
      assert.strictEqual(current.configVersion, 20)
      assert.strictEqual(current.createdAt, createdAt)

      // Restating nulls that are already in effect is a no-op.
      yield* TestClock.adjust("1 second")
      const noop = yield* patchAgent(created.id, {
        artifacts: null,
        approvals: null,
        policies: null,
        context: [],
        capabilities: {}
      })
      assert.deepStrictEqual(noop, current)
      // A config edit and a metadata edit together: one increment.
      yield* step(
        { band: "lite", metadata: { owner: null } },
        (p) => ({ ...p, band: "lite", metadata: { team: "core" } })
      )
    }))

  it.effect("PATCH: an invalid patch answers 400 and leaves the agent unchanged", () =>
    Effect.gen(function*() {
      const fortyNine = Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`k${i}`, "v"]))
      const agent = yield* createAgent({ metadata: fortyNine, workspace: { type: "managed", shell: false } })
      yield* TestClock.adjust("1 second")
      const refusals: ReadonlyArray<readonly [body: unknown, field: string, code: string]> = [
        [{ band: "frontier" }, "band", "invalid_request_error"],
        [{ band: "ultra" }, "band", "invalid_request_error"],
        [{ foo: 1 }, "foo", "invalid_request_error"],
        [{ policies: { foo: 1 } }, "policies.foo", "invalid_request_error"],
        [
          { workspace: { type: "managed", mediaEditing: true } },
          "workspace.mediaEditing",
          "managed_media_editing_unconfigured"
        ],
        [
          { workspace: { type: "managed", filesystem: false, shell: true } },
          "workspace.shell",
          "invalid_request_error"
        ],
        [{ capabilities: { browser: true }, workspace: null }, "capabilities.browser", "managed_browser_unconfigured"],
        [{ capabilities: { media: true } }, "capabilities.media", "media_runtime_unconfigured"],
        [{ workspace: { type: "managed", documents: true } }, "workspace.documents", "managed_documents_unconfigured"],
        [{ workspace: { type: "remote", environmentId: "env_1" } }, "workspace.environmentId", "invalid_request_error"],
        [
          { capabilities: { codehost: { connectionId: "chc_1" } }, workspace: null },
          "capabilities.codehost",
          "invalid_request_error"
        ],
        [{ context: [{ id: "x", content: "a" }, { id: "x", content: "b" }] }, "context[1].id", "invalid_request_error"],
        [{ context: repeat("c", 32_769) }, "context", "invalid_request_error"],
        [{ metadata: { n1: "v", n2: "v" } }, "metadata", "invalid_request_error"],
        [{ metadata: { k0: repeat("v", 501) } }, "metadata.k0", "invalid_request_error"],
        [{ approvals: { autoAllow: ["no spaces"] } }, "approvals.autoAllow[0]", "invalid_request_error"]
      ]
      for (const [body, field, code] of refusals) {
        yield* expectInvalid(yield* patch(agent.id, body), field, code)
      }
      assert.deepStrictEqual(yield* TestServer.expectOk(yield* get(agent.id), 200, Agent), agent)
      // Replacing one key and adding one keeps the total at 50: accepted.
      const merged = yield* patchAgent(agent.id, { metadata: { k0: null, n1: "v", n2: "v" } })
      assert.strictEqual(Object.keys(merged.metadata).length, 50)
      assert.strictEqual(merged.configVersion, 1)
    }))

  it.effect("Idempotency-Key on create replays the first agent; another body with the key is 409", () =>
    Effect.gen(function*() {
      const headers = { "idempotency-key": "agents-test-create-1" }
      const body = { context: "idempotent", metadata: { n: "1" } }
      const first = yield* request("POST", "/v1/agents", { body, headers, key: TestServer.Keys.b })
      const agent = yield* TestServer.expectOk(first, 200, Agent)
      yield* TestClock.adjust("1 second")
      const replay = yield* request("POST", "/v1/agents", { body, headers, key: TestServer.Keys.b })
      assert.strictEqual(replay.status, 200)
      assert.deepStrictEqual(replay.json, first.json)
      assert.strictEqual((yield* listAll(TestServer.Keys.b)).filter((a) => a.metadata["n"] === "1").length, 1)
      const conflict = yield* request("POST", "/v1/agents", {
        body: { ...body, context: "different" },
        headers,
        key: TestServer.Keys.b
      })
      yield* TestServer.expectError(conflict, 409, "api_error", "idempotency_key_conflict")
      assert.deepStrictEqual((yield* get(agent.id, TestServer.Keys.b)).json, first.json)
    }))

  it.effect.each(routes)(
    "an unknown id answers 404 agent_not_found naming the id: $label",
    (route) =>
      Effect.gen(function*() {
        const id = "agent_0000000000000000000000"
        const error = yield* expectNotFound(yield* call(route, id), "agent_not_found")
        assert.include(error.message, id)
      })
  )

  it.effect("an id that is not an agent id answers 404 agent_not_found", () =>
    Effect.gen(function*() {
      yield* expectNotFound(yield* get("not-an-id"), "agent_not_found")
    }))

  it.effect.each(byOtherTenants(routes))(
    "an agent of another workspace answers 403 permission_denied and stays untouched: $label",
    ({ route, tenant }) =>
      Effect.gen(function*() {
        const agent = yield* createAgent({ context: "mine" })
        yield* expectDenied(yield* call(route, agent.id, tenant.key))
        assert.isFalse((yield* listAll(tenant.key)).some((a) => a.id === agent.id))
        assert.deepStrictEqual(yield* TestServer.expectOk(yield* get(agent.id), 200, Agent), agent)
      })
  )

  it.effect("DELETE answers { id, object: 'agent', deleted: true } and removes the agent and its threads", () =>
    Effect.gen(function*() {
      const agent = yield* createAgent({ context: "doomed" })
      const thread = yield* Collection.threads.create({ agentId: agent.id })
      assert.strictEqual((yield* request("GET", `/v1/threads/${thread.id}`)).status, 200)
      assert.isTrue((yield* listAll()).some((a) => a.id === agent.id))

      const deleted = yield* request("DELETE", `/v1/agents/${agent.id}`)
      yield* TestServer.expectOk(deleted, 200, Deleted("agent"))
      assert.deepStrictEqual(deleted.json, { id: agent.id, object: "agent", deleted: true })

      yield* TestServer.expectError(yield* get(agent.id), 404, "not_found", "agent_not_found")
      yield* TestServer.expectError(yield* patch(agent.id, { band: "lite" }), 404, "not_found", "agent_not_found")
      yield* TestServer.expectError(
        yield* request("DELETE", `/v1/agents/${agent.id}`),
        404,
        "not_found",
        "agent_not_found"
      )
      yield* TestServer.expectError(
        yield* request("GET", `/v1/threads/${thread.id}`),
        404,
        "not_found",
        "thread_not_found"
      )
      assert.isFalse((yield* listAll()).some((a) => a.id === agent.id))
    }))
})

// ---- listing, on a fresh database --------------------------------------------

TestServer.suite()("agents list", (it) => {
  it.effect("GET /v1/agents pages newest first with limit and cursor", () =>
    Effect.gen(function*() {
      const empty = yield* request("GET", "/v1/agents")
      assert.strictEqual(empty.status, 200)
      assert.deepStrictEqual(empty.json, { object: "list", data: [], hasMore: false, nextCursor: null, limit: 20 })

      // Five agents a second apart, three at one instant (ordered by id), two more.
      const created: Array<Agent> = []
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust("1 second")
        created.push(yield* createAgent({ metadata: { n: String(i) } }))
      }
      yield* TestClock.adjust("1 second")
      for (let i = 5; i < 8; i++) created.push(yield* createAgent({ metadata: { n: String(i) } }))
      for (let i = 8; i < 10; i++) {
        yield* TestClock.adjust("1 second")
        created.push(yield* createAgent({ metadata: { n: String(i) } }))
      }
      const newestFirst = [...created].sort((x, y) =>
        x.createdAt === y.createdAt ? (x.id < y.id ? 1 : -1) : x.createdAt < y.createdAt ? 1 : -1
      )
      assert.strictEqual(new Set(created.map((a) => a.createdAt)).size, 8)

      // Default limit 20: everything on one page.
      const all = yield* request("GET", "/v1/agents")
      assert.strictEqual(all.status, 200)
      assert.deepStrictEqual(all.json, {
        object: "list",
        data: newestFirst,
        hasMore: false,
        nextCursor: null,
        limit: 20
      })

      // Walk pages of three.
      const seen: Array<string> = []
      const shapes: Array<readonly [number, boolean]> = []
      let cursor: string | null = null
      do {
        const path: string = cursor === null
          ? "/v1/agents?limit=3"
          : `/v1/agents?limit=3&cursor=${encodeURIComponent(cursor)}`
        const page = yield* TestServer.expectOk(yield* request("GET", path), 200, AgentPage)
        assert.strictEqual(page.object, "list")
        assert.strictEqual(page.limit, 3)
        assert.strictEqual(page.nextCursor === null, !page.hasMore)
        shapes.push([page.data.length, page.hasMore])
        seen.push(...page.data.map((a) => a.id))
        cursor = page.nextCursor
      } while (cursor !== null)
      assert.deepStrictEqual(shapes, [[3, true], [3, true], [3, true], [1, false]])
      assert.deepStrictEqual(seen, newestFirst.map((a) => a.id))
      assert.strictEqual(new Set(seen).size, 10)

      // A page exactly as large as what is left has no next page.
      const ten = yield* TestServer.expectOk(yield* request("GET", "/v1/agents?limit=10"), 200, AgentPage)
      assert.deepStrictEqual(ten, { object: "list", data: newestFirst, hasMore: false, nextCursor: null, limit: 10 })
      const max = yield* TestServer.expectOk(yield* request("GET", "/v1/agents?limit=100"), 200, AgentPage)
      assert.deepStrictEqual(max, { object: "list", data: newestFirst, hasMore: false, nextCursor: null, limit: 100 })

      // A cursor keeps its place when agents are created or deleted meanwhile.
      const nine = yield* TestServer.expectOk(yield* request("GET", "/v1/agents?limit=9"), 200, AgentPage)
      assert.isTrue(nine.hasMore)
      assert.deepStrictEqual(nine.data, newestFirst.slice(0, 9))
      const nextCursor = nine.nextCursor ?? ""
      yield* TestClock.adjust("1 second")
      const newer = yield* createAgent({ metadata: { n: "new" } })
      assert.strictEqual((yield* request("DELETE", `/v1/agents/${newestFirst[8].id}`)).status, 200)
      const rest = yield* TestServer.expectOk(
        yield* request("GET", `/v1/agents?limit=9&cursor=${encodeURIComponent(nextCursor)}`),
        200,
        AgentPage
      )
      assert.deepStrictEqual(rest, {
        object: "list",
        data: [newestFirst[9]],
        hasMore: false,
        nextCursor: null,
        limit: 9
      })
      const first = yield* TestServer.expectOk(yield* request("GET", "/v1/agents?limit=1"), 200, AgentPage)
      assert.deepStrictEqual(first.data.map((a) => a.id), [newer.id])
      assert.isTrue(first.hasMore)
    }))

  it.effect("GET /v1/agents lists only the caller's workspace", () =>
    Effect.gen(function*() {
      const mine = yield* listAll()
      assert.isAbove(mine.length, 0)
      // Key b: same organization, another workspace. Key c: another organization
      // whose workspace happens to be named 'prod' too.
      for (const key of [TestServer.Keys.b, TestServer.Keys.c]) {
        const other = yield* request("GET", "/v1/agents", { key })
        assert.deepStrictEqual(
          other.json,
          { object: "list", data: [], hasMore: false, nextCursor: null, limit: 20 },
          `key ${key}`
        )
      }
      assert.deepStrictEqual(yield* listAll(), mine)
    }))

  it.effect("GET /v1/agents refuses a limit outside 1-100 and a cursor it did not issue", () =>
    Effect.gen(function*() {
      for (const limit of ["0", "101", "abc", "1.5", "-1", ""]) {
        const error = yield* expectInvalid(yield* request("GET", `/v1/agents?limit=${limit}`), "limit")
        assert.deepStrictEqual(errorFields(error.details), ["limit"])
      }
      for (const cursor of ["garbage", "W10", encodeURIComponent("not base64 !")]) {
        const error = yield* expectInvalid(yield* request("GET", `/v1/agents?cursor=${cursor}`), "cursor")
        assert.deepStrictEqual(errorFields(error.details), ["cursor"])
      }
    }))
})

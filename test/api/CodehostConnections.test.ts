/**
 * Code-hosting connections (spec 2.7, 3.3, 4.8, 7, 8) through the whole
 * service against the fake GitHub: authorize and the callback (signed,
 * single-use, 30-minute state; binding only once the person's own OAuth token
 * shows the installation), every status, repair keeping the id, access
 * updates checked against the installation, repositories, sync, test without
 * side effects, webhooks, delete and isolation; and `codehost_unconfigured`
 * without an app.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Authorization, AuthorizationState, CodehostConnection, TestResult } from "../../domain/Codehost.ts"
import { RepositoryItem } from "../../domain/Codehost.ts"
import { Deleted, Page } from "../../domain/Page.ts"
import * as Harness from "../support/github/Harness.ts"
import * as TestServer from "../support/TestServer.ts"

const { request, expectOk, expectError, Keys } = TestServer
const base = "/v1/codehost-connections"
const read = (id: string, key?: string) =>
  Effect.flatMap(
    request("GET", `${base}/${id}`, key === undefined ? {} : { key }),
    (r) => expectOk(r, 200, CodehostConnection)
  )
const authorize = (body: unknown = {}) =>
  Effect.flatMap(request("POST", `${base}/authorize`, { body }), (r) => expectOk(r, 200, Authorization))
const polled = (id: string) =>
  Effect.flatMap(request("GET", `${base}/authorize/${id}`), (r) => expectOk(r, 200, AuthorizationState))
const action = (id: string, name: string) => request("POST", `${base}/${id}/${name}`)

layer(Harness.layer(), { timeout: TestServer.setupTimeout })("code-hosting connections", (it) => {
  it.effect("authorize answers a signed install URL; the callback binds the installation the person can access: ready with the selected grant", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      gh.state.addRepo("acme/api")
      gh.state.addRepo("acme/web")
      const installation = gh.state.addInstallation("acme", ["acme/api", "acme/web"])
      gh.state.addPerson("alice", [installation.id])
      const now = yield* TestServer.nowIso
      const started = yield* authorize({ name: "acme-github" })
      assert.strictEqual(started.status, "pending")
      assert.match(started.id, /^chc_[0-9A-Za-z]{22}$/)
      const url = new URL(started.url ?? "")
      assert.strictEqual(`${url.origin}${url.pathname}`, `${gh.webUrl}/apps/${gh.slug}/installations/new`)
      assert.strictEqual(
        started.expiresAt,
        new Date(Date.parse(now) - (Date.parse(now) % 1000) + 30 * 60_000).toISOString()
      )
      const pending = yield* read(started.id)
      assert.deepStrictEqual([pending.status, pending.account, pending.supportsRepositoryTools], [
        "pending",
        null,
        false
      ])
      assert.strictEqual((yield* polled(started.id)).status, "pending")

      const landed = yield* Harness.callback({
        code: gh.state.codeFor("alice"),
        installation_id: String(installation.id),
        setup_action: "install",
        state: Harness.stateOf(started.url ?? "")
      })
      assert.strictEqual(landed.status, 200)
      assert.include(landed.headers.get("content-type") ?? "", "text/html")
      assert.include(landed.text, "<strong>ready</strong>")
      const ready = yield* read(started.id)
      assert.deepStrictEqual(
        {
          status: ready.status,
          statusReason: ready.statusReason,
          account: ready.account,
          access: ready.access,
          repo: ready.supportsRepositoryTools,
          account_: ready.supportsAccountTools
        },
        {
          status: "ready",
          statusReason: null,
          account: { login: "acme", type: "Organization" },
          access: { repositories: ["acme/api", "acme/web"], owners: ["acme"], account: false },
          repo: true,
          account_: false
        }
      )
      const done = yield* polled(started.id)
      assert.strictEqual(done.status, "completed")
      assert.deepStrictEqual(done.connection, ready)

      // Single use: the same link again is refused, and the connection is untouched.
      const again = yield* Harness.callback({
        code: gh.state.codeFor("alice"),
        installation_id: String(installation.id),
        state: Harness.stateOf(started.url ?? "")
      })
      const error = yield* expectError(again, 400, "invalid_request_error", "codehost_state_invalid")
      assert.include(error.message, "already used")
    }))

  it.effect("a link expires after 30 minutes, a forged or altered state is refused, and neither binds anything", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      const installation = gh.state.addInstallation("expiring", [])
      gh.state.addPerson("bob", [installation.id])
      const started = yield* authorize()
      const state = Harness.stateOf(started.url ?? "")
      const forged = state.slice(0, -3) + (state.endsWith("AAA") ? "BBB" : "AAA")
      const bad = yield* Harness.callback({
        code: gh.state.codeFor("bob"),
        installation_id: String(installation.id),
        state: forged
      })
      assert.include(
        (yield* expectError(bad, 400, "invalid_request_error", "codehost_state_invalid")).message,
        "signature"
      )
      const none = yield* Harness.callback({ code: "x", installation_id: "1" })
      yield* expectError(none, 400, "invalid_request_error", "codehost_state_invalid")
      yield* TestClock.adjust("31 minutes")
      const late = yield* Harness.callback({
        code: gh.state.codeFor("bob"),
        installation_id: String(installation.id),
        state
      })
      assert.include(
        (yield* expectError(late, 400, "invalid_request_error", "codehost_state_invalid")).message,
        "expired"
      )
      assert.strictEqual((yield* read(started.id)).status, "pending")
    }))

  it.effect("a person who cannot access the installation binds nothing (error); repair keeps the id and the returnUrl redirect carries the outcome", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      gh.state.addRepo("globex/app")
      const installation = gh.state.addInstallation("globex", ["globex/app"])
      gh.state.addPerson("mallory", [])
      gh.state.addPerson("carol", [installation.id])
      const started = yield* authorize({ returnUrl: "https://app.example.com/github?tab=1" })
      const landed = yield* Harness.callback({
        code: gh.state.codeFor("mallory"),
        installation_id: String(installation.id),
        state: Harness.stateOf(started.url ?? "")
      })
      assert.strictEqual(landed.status, 302)
      const location = new URL(landed.headers.get("location") ?? "")
      assert.deepStrictEqual([
        location.origin + location.pathname,
        location.searchParams.get("tab"),
        location.searchParams.get("connectionId"),
        location.searchParams.get("status")
      ], [
        "https://app.example.com/github",
        "1",
        started.id,
        "error"
      ])
      const failed = yield* read(started.id)
      assert.deepStrictEqual([failed.status, failed.account], ["error", null])
      assert.include(failed.statusReason ?? "", `cannot access installation ${installation.id}`)
      assert.strictEqual((yield* polled(started.id)).status, "pending")

      const repair = yield* authorize({ connectionId: started.id })
      assert.strictEqual(repair.id, started.id)
      assert.notStrictEqual(repair.url, started.url)
      yield* Harness.callback({
        code: gh.state.codeFor("carol"),
        installation_id: String(installation.id),
        state: Harness.stateOf(repair.url ?? "")
      })
      const repaired = yield* read(started.id)
      assert.deepStrictEqual([repaired.id, repaired.status, repaired.access.repositories], [started.id, "ready", [
        "globex/app"
      ]])
    }))

  it.effect("an installation awaiting an organization owner is action_required", () =>
    Effect.gen(function*() {
      const started = yield* authorize()
      const landed = yield* Harness.callback({ setup_action: "request", state: Harness.stateOf(started.url ?? "") })
      assert.strictEqual(landed.status, 200)
      const waiting = yield* read(started.id)
      assert.strictEqual(waiting.status, "action_required")
      assert.include(waiting.statusReason ?? "", "organization owner")
      assert.strictEqual((yield* polled(started.id)).status, "action_required")
    }))

  it.effect("access updates accept only repositories the installation selects; repositories shows grantable ones; sync never grants and removes what GitHub removed", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      const { id, installationId } = yield* Harness.connect({
        account: "initech",
        repositories: ["initech/one", "initech/two"]
      })
      const before = yield* read(id)
      const refused = yield* request("PATCH", `${base}/${id}`, {
        body: { access: { repositories: ["initech/one", "initech/three"], owners: ["initech"], account: false } }
      })
      const error = yield* expectError(refused, 400, "invalid_request_error", "invalid_request_error")
      assert.deepStrictEqual(error.details, { field: "access.repositories[1]" })
      const narrowed = yield* expectOk(
        yield* request("PATCH", `${base}/${id}`, {
          body: { access: { repositories: ["initech/one"], owners: ["initech"], account: false } }
        }),
        200,
        CodehostConnection
      )
      assert.deepStrictEqual([narrowed.access.repositories, narrowed.configVersion], [
        ["initech/one"],
        before.configVersion + 1
      ])

      // GitHub selects one more repository and drops another.
      gh.state.addRepo("initech/three")
      const installation = gh.state.installations.get(installationId)!
      installation.repositories = ["initech/one", "initech/three"]
      const listed = yield* expectOk(yield* request("GET", `${base}/${id}/repositories`), 200, Page(RepositoryItem))
      assert.deepStrictEqual(listed.data, [
        { repository: "initech/one", grantable: true, granted: true },
        { repository: "initech/three", grantable: true, granted: false }
      ])
      const paged = yield* expectOk(
        yield* request("GET", `${base}/${id}/repositories?limit=1`),
        200,
        Page(RepositoryItem)
      )
      assert.deepStrictEqual([paged.data.map((r) => r.repository), paged.hasMore], [["initech/one"], true])
      const rest = yield* expectOk(
        yield* request("GET", `${base}/${id}/repositories?limit=1&cursor=${paged.nextCursor}`),
        200,
        Page(RepositoryItem)
      )
      assert.deepStrictEqual([rest.data.map((r) => r.repository), rest.hasMore, rest.nextCursor], [
        ["initech/three"],
        false,
        null
      ])

      installation.repositories = ["initech/three"]
      const synced = yield* expectOk(yield* action(id, "sync"), 200, CodehostConnection)
      assert.deepStrictEqual([synced.status, synced.access.repositories], ["ready", []])
      assert.isNotNull(synced.lastSyncedAt)
    }))

  it.effect("sync: suspended and uninstalled installations are revoked, a healthy one heals to ready", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      const { id, installationId } = yield* Harness.connect({ account: "umbrella", repositories: ["umbrella/core"] })
      const installation = gh.state.installations.get(installationId)!
      installation.suspended = true
      const suspended = yield* expectOk(yield* action(id, "sync"), 200, CodehostConnection)
      assert.deepStrictEqual([suspended.status, suspended.supportsRepositoryTools], ["revoked", false])
      assert.include(suspended.statusReason ?? "", "suspended")
      installation.suspended = false
      assert.strictEqual((yield* expectOk(yield* action(id, "sync"), 200, CodehostConnection)).status, "ready")
      gh.state.installations.delete(installationId)
      const gone = yield* expectOk(yield* action(id, "sync"), 200, CodehostConnection)
      assert.strictEqual(gone.status, "revoked")
      assert.include(gone.statusReason ?? "", "uninstalled")
    }))

  it.effect("test probes every granted repository with a read-only token narrowed to it and changes nothing", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      const { id, installationId } = yield* Harness.connect({ account: "hooli", repositories: ["hooli/a", "hooli/b"] })
      const before = yield* read(id)
      const minted = gh.state.minted.length
      yield* TestClock.adjust("1 second")
      const result = yield* expectOk(yield* action(id, "test"), 200, TestResult)
      assert.deepStrictEqual(result, {
        ok: true,
        status: "ready",
        statusReason: null,
        accountGrant: "disabled",
        repositories: [{ repository: "hooli/a", ok: true }, { repository: "hooli/b", ok: true }]
      })
      const probes = gh.state.minted.slice(minted).filter((m) => m.repositories.length === 1)
      assert.deepStrictEqual(probes.map((m) => [m.repositories, m.permissions]), [[["hooli/a"], { metadata: "read" }], [
        ["hooli/b"],
        { metadata: "read" }
      ]])
      gh.state.installations.get(installationId)!.suspended = true
      const suspended = yield* expectOk(yield* action(id, "test"), 200, TestResult)
      assert.deepStrictEqual([suspended.ok, suspended.status], [false, "revoked"])
      assert.deepStrictEqual(yield* read(id), before)
      gh.state.installations.get(installationId)!.suspended = false
    }))

  it.effect("webhooks: a bad signature is refused; removed repositories leave the grant; an uninstall revokes", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      const { id, installationId } = yield* Harness.connect({ account: "wayne", repositories: ["wayne/x", "wayne/y"] })
      const send = (event: string, payload: unknown, signature?: string) => {
        const body = JSON.stringify(payload)
        return request("POST", `${base}/webhooks`, {
          key: null,
          rawBody: body,
          headers: {
            "content-type": "application/json",
            "x-github-event": event,
            "x-hub-signature-256": signature ?? gh.sign(body)
          }
        })
      }
      const removed = {
        action: "removed",
        installation: { id: installationId },
        repositories_removed: [{ full_name: "wayne/y" }],
        repositories_added: [],
        sender: { login: "wayne" }
      }
      yield* expectError(
        yield* send("installation_repositories", removed, gh.sign("something else")),
        400,
        "invalid_request_error",
        "webhook_signature_invalid"
      )
      assert.deepStrictEqual((yield* read(id)).access.repositories, ["wayne/x", "wayne/y"])
      const accepted = yield* send("installation_repositories", removed)
      assert.deepStrictEqual([accepted.status, accepted.json], [200, { received: true, updated: 1 }])
      assert.deepStrictEqual((yield* read(id)).access.repositories, ["wayne/x"])
      yield* send("installation", { action: "deleted", installation: { id: installationId } })
      const revoked = yield* read(id)
      assert.deepStrictEqual([revoked.status, revoked.supportsRepositoryTools], ["revoked", false])
      assert.deepStrictEqual((yield* send("star", { action: "created", installation: { id: installationId } })).json, {
        received: true,
        updated: 0
      })
    }))

  it.effect("delete answers the delete response (the installation stays on GitHub); other workspaces get 403, unknown ids 404", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      const { id, installationId } = yield* Harness.connect({ account: "stark", repositories: ["stark/suit"] })
      yield* expectError(
        yield* request("GET", `${base}/${id}`, { key: Keys.b }),
        403,
        "permission_error",
        "permission_denied"
      )
      yield* expectError(
        yield* request("DELETE", `${base}/${id}`, { key: Keys.c }),
        403,
        "permission_error",
        "permission_denied"
      )
      const deleted = yield* expectOk(yield* request("DELETE", `${base}/${id}`), 200, Deleted("codehost_connection"))
      assert.deepStrictEqual(deleted, { id, object: "codehost_connection", deleted: true })
      yield* expectError(yield* request("GET", `${base}/${id}`), 404, "not_found", "codehost_connection_not_found")
      yield* expectError(yield* request("GET", `${base}/chc_nope`), 404, "not_found", "codehost_connection_not_found")
      assert.isTrue(gh.state.installations.has(installationId))
    }))
})

TestServer.suite()("code-hosting connections without a GitHub App", (it) => {
  it.effect("every route answers 503 codehost_unconfigured", () =>
    Effect.gen(function*() {
      for (
        const [method, path] of [["GET", base], ["POST", `${base}/authorize`], ["GET", `${base}/chc_abc`], [
          "POST",
          `${base}/chc_abc/sync`
        ]] as const
      ) {
        const reply = yield* request(method, path, method === "POST" ? { body: {} } : {})
        const error = yield* expectError(reply, 503, "api_error", "codehost_unconfigured")
        assert.include(error.message, "SVC_GITHUB_APP_ID")
      }
      const callback = yield* Harness.callback({ state: "x" })
      yield* expectError(callback, 503, "api_error", "codehost_unconfigured")
    }))
})

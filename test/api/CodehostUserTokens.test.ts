/**
 * The installing person's token (spec 2.7 access.account, 4.8 rules 1 and 5):
 * GitHub App user tokens expire after 8 hours. A run parked for approval
 * past that renews the token with its refresh token when the account tool
 * fires (once, the new pair stored: the old refresh token is spent); a
 * renewal GitHub refuses revokes the connection's grant, saying why and what
 * to do, and the account tools are no longer offered. Time is TestClock's:
 * GitHub is told its side of it (the tokens it issued expired).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { CodehostConnection } from "../../domain/Codehost.ts"
import {
  agentWithThread,
  failuresOf,
  getRun,
  outputsOf,
  send,
  streamOf,
  textOf,
  toolStep
} from "../support/Conversation.ts"
import * as Harness from "../support/github/Harness.ts"
import { approveAll } from "../support/Interactions.ts"
import * as TestServer from "../support/TestServer.ts"

const { request, expectOk } = TestServer
const workspace = { type: "managed", network: { mode: "restricted", allowDomains: ["example.com"] } }

const approve = (runId: string) =>
  Effect.gen(function*() {
    yield* approveAll(runId)
    return yield* streamOf(runId)
  })

const offered = (threadId: string) =>
  Effect.map(
    send(threadId, "/show-tools"),
    ({ parsed }) =>
      (JSON.parse(textOf(parsed.message)) as ReadonlyArray<{ readonly name: string }>).map((t) => t.name).filter((n) =>
        n.includes("gist")
      )
  )

// The clock moves by 9 hours twice: scheduled recovery passes every hour, not a thousand of them.
layer(Harness.layer({ recoveryIntervalMs: 60 * 60 * 1000 }), { timeout: TestServer.setupTimeout })(
  "the installing person's token",
  (it) => {
    it.effect("an expired token is renewed once and stored; a renewal GitHub refuses revokes the grant, saying why", () =>
      Effect.gen(function*() {
        const gh = yield* Harness.GitHub
        const { id } = yield* Harness.connect({ account: "ut", repositories: ["ut/app"], login: "utperson" })
        yield* request("PATCH", `/v1/codehost-connections/${id}`, {
          body: { access: { repositories: ["ut/app"], owners: ["ut"], account: true } }
        })
        const { thread } = yield* agentWithThread({ workspace, capabilities: { codehost: { connectionId: id } } })
        const [, firstRefresh] = gh.state.userTokens
        const renewals = () =>
          gh.received.filter((r) =>
            r.line === "POST /login/oauth/access_token" && r.body["grant_type"] === "refresh_token"
          )

        // The gist waits for approval for 9 hours: the person's token expires meanwhile.
        const parked = yield* send(
          thread.id,
          toolStep("codehost_create_gist", { files: { "a.txt": "written after the wait" } })
        )
        assert.strictEqual((yield* getRun(parked.runId)).status, "waiting_for_approval")
        yield* TestClock.adjust("9 hours")
        gh.state.expireUserTokens("utperson")
        const resumed = yield* approve(parked.runId)
        assert.deepStrictEqual(failuresOf(resumed.chunks), [])
        const [gist] = [...gh.state.gists.values()]
        assert.deepStrictEqual(outputsOf(resumed.chunks), [{
          id: gist.id,
          html_url: `https://gist.github.example/${gist.id}`
        }])
        assert.deepStrictEqual([gist.owner, gist.files], ["utperson", { "a.txt": "written after the wait" }])
        assert.deepStrictEqual(renewals().map((r) => [r.body["refresh_token"], r.body["client_id"]]), [[
          firstRefresh,
          gh.clientId
        ]])
        assert.isFalse(gh.state.refreshTokens.has(firstRefresh))

        // Within the next 8 hours the renewed token is used as it is.
        yield* TestClock.adjust("1 hour")
        const listed = yield* send(thread.id, toolStep("codehost_list_gists", {}))
        assert.deepStrictEqual(outputsOf(listed.parsed.chunks), [[{
          id: gist.id,
          description: "",
          public: false,
          files: ["a.txt"]
        }]])
        assert.strictEqual(renewals().length, 1)
        const healthy = yield* expectOk(
          yield* request("GET", `/v1/codehost-connections/${id}`),
          200,
          CodehostConnection
        )
        assert.deepStrictEqual([healthy.status, healthy.statusReason, healthy.supportsAccountTools], [
          "ready",
          null,
          true
        ])

        // The person revoked the app on GitHub: its refresh token no longer works.
        yield* TestClock.adjust("9 hours")
        gh.state.expireUserTokens("utperson")
        gh.state.refreshTokens.clear()
        assert.deepStrictEqual(yield* offered(thread.id), [])
        assert.strictEqual(renewals().length, 2)
        const revoked = yield* expectOk(
          yield* request("GET", `/v1/codehost-connections/${id}`),
          200,
          CodehostConnection
        )
        assert.deepStrictEqual([revoked.status, revoked.supportsAccountTools, revoked.supportsRepositoryTools], [
          "revoked",
          false,
          false
        ])
        assert.strictEqual(
          revoked.statusReason,
          "The installing person's authorization expired and GitHub refused to renew it (GitHub refused to renew the person's authorization: " +
            "The refresh token passed is incorrect or expired.); authorize again with this connectionId to capture a new one."
        )
      }))
  }
)

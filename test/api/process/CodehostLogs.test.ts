/**
 * Credentials never reach the service's log (spec 4.8 rule 7), nor an error
 * or a tool result: the service runs as a process logging JSON lines, an
 * agent works on a repository (issues, the workspace's git, the person's
 * gists) while GitHub fails some calls echoing the credential it was sent, in
 * its error body and in its headers; a sync fails the same way, and a code
 * exchange fails echoing the app's client secret. Then the process's whole
 * output, the streams and the API's answers are searched for every
 * installation token and user token GitHub issued, the app's private key and
 * its client secret: none is there.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { agentWithThread, failureTextsOf, send, toolStep } from "../../support/Conversation.ts"
import * as Harness from "../../support/github/Harness.ts"
import type { Faulted } from "../../support/github/Interceptions.ts"
import * as ServiceProcess from "../../support/ServiceProcess.ts"
import { testDatabase } from "../../support/TestDatabase.ts"
import * as TestServer from "../../support/TestServer.ts"

const { Keys, request } = TestServer

/** GitHub failing with `status`, the credential it was sent in its message and its headers. */
const echoing = (status: number) => ({ credential }: Faulted) => ({
  status,
  body: { message: `Bad credentials: ${credential}`, documentation_url: "https://docs.github.com/rest" },
  headers: {
    "x-github-request-id": credential ?? "",
    "www-authenticate": `Bearer realm="GitHub" token="${credential}"`
  }
})

describe("credentials and the service's log", () => {
  it.live(
    "no token GitHub issued, nor the app's key or client secret, is in the log, an error, a stream or an answer",
    () =>
      Effect.gen(function*() {
        const db = yield* testDatabase
        const { gh, env: github } = yield* Harness.forProcess
        gh.state.addRepo("lg/app", { "README.md": "# app\n" }).issues.push({
          number: 1,
          title: "Crash",
          body: "On start",
          state: "open",
          labels: [],
          comments: [],
          user: "octo"
        })
        const service = yield* ServiceProcess.start({
          ...github,
          DATABASE_URL: db.url,
          SVC_API_KEYS: `${Keys.a}:org_logs:prod`,
          SVC_MASTER_KEY: TestServer.testMasterKey,
          SVC_WORKSPACE_ROOT: TestServer.testWorkspaceRoot,
          SVC_LOG_FORMAT: "json",
          SVC_RUNNER_HOST: "127.0.0.1",
          PORT: String(yield* TestServer.freePort),
          SVC_RUNNER_PORT: String(yield* TestServer.freePort)
        })
        const answers = yield* Effect.gen(function*() {
          const { id } = yield* Harness.connect({ account: "lg", repositories: ["lg/app"] })
          yield* request("PATCH", `/v1/codehost-connections/${id}`, {
            body: { access: { repositories: ["lg/app"], owners: ["lg"], account: true } }
          })
          const { thread } = yield* agentWithThread({
            workspace: { type: "managed", network: { mode: "restricted", allowDomains: ["example.com"] } },
            capabilities: { codehost: { connectionId: id, approval: "never" } }
          })
          gh.fault("GET", "/api/v3/repos/lg/app", echoing(401))
          gh.fault("GET", "/api/v3/repos/lg/app/issues", echoing(500))
          gh.fault("POST", "/api/v3/gists", echoing(401))
          const r = { repository: "lg/app" }
          const { parsed } = yield* send(
            thread.id,
            [
              toolStep("codehost_get_issue", { ...r, number: 1 }),
              toolStep("codehost_get_repository", r),
              toolStep("codehost_list_issues", r),
              toolStep("codehost_create_gist", { files: { "a.txt": "a" } }),
              toolStep("codehost_checkout", r),
              toolStep("codehost_list_gists", {}),
              "/text done"
            ].join("\n")
          )
          const errors = failureTextsOf(parsed.chunks)
          assert.deepStrictEqual(errors, [
            "codehost_github_error: GitHub answered 401: Bad credentials: <redacted>",
            "codehost_github_error: GitHub answered 500: Bad credentials: <redacted>",
            "codehost_github_error: GitHub answered 401: Bad credentials: <redacted>"
          ])

          gh.fault("GET", "/api/v3/installation/repositories", echoing(500))
          const sync = yield* request("POST", `/v1/codehost-connections/${id}/sync`)
          assert.strictEqual(sync.status, 502, sync.text)
          assert.include(sync.text, "Bad credentials: <redacted>")

          // A repair whose code exchange GitHub refuses, echoing the app's client secret.
          const repair = (yield* request("POST", "/v1/codehost-connections/authorize", { body: { connectionId: id } }))
            .json as { readonly url: string }
          gh.fault(
            "POST",
            "/login/oauth/access_token",
            ({ body }) => ({
              status: 200,
              body: {
                error: "incorrect_client_credentials",
                error_description: `client_secret ${String(body["client_secret"])} is wrong`
              }
            })
          )
          const installationId = [...gh.state.installations.keys()][0]
          yield* Harness.callback({
            code: gh.state.codeFor("nobody"),
            installation_id: String(installationId),
            setup_action: "install",
            state: Harness.stateOf(repair.url)
          })
          const connection = yield* request("GET", `/v1/codehost-connections/${id}`)
          assert.include(connection.text, "the OAuth code was refused: client_secret <redacted> is wrong")
          return [JSON.stringify(parsed.chunks), sync.text, connection.text]
        }).pipe(
          Effect.provideService(TestServer.TestApi, TestServer.client(service.url)),
          Effect.provideService(Harness.GitHub, gh)
        )
        yield* ServiceProcess.stop(service)

        const lines = service.stdout().split("\n").filter((l) => l.trim() !== "")
        assert.isAbove(lines.length, 10)
        const secrets = [
          ...gh.state.minted.map((m) => m.token),
          ...gh.state.userTokens,
          gh.clientSecret,
          // The key's body, line by line (a JSON line would carry it with escaped newlines).
          ...gh.privateKey.split("\n").filter((l) => l.length > 0 && !l.startsWith("-----"))
        ]
        assert.isAbove(gh.state.minted.length, 5)
        assert.isAbove(gh.state.userTokens.length, 1)
        for (const secret of secrets) {
          assert.notInclude(service.output(), secret, "the process's output")
          for (const text of answers) assert.notInclude(text, secret, "a stream or an answer")
        }
      }).pipe(Effect.scoped),
    180_000
  )
})

/**
 * GitHub over https, as GitHub and GitHub Enterprise are (spec 4.8 "Workspace
 * git uses a plain https remote"): the fake GitHub serves TLS with a
 * certificate of a test CA that the service trusts (as a deployment trusts
 * its GitHub Enterprise's CA with NODE_EXTRA_CA_CERTS). The API calls go over
 * TLS, and so does the workspace's git: the sandbox's git speaks plain HTTP to
 * the egress proxy for that one command, the proxy adds the credential and
 * re-originates the request over TLS, verifying GitHub's certificate; the
 * clone's remote stays the https URL. A clone is checked out, fetched again,
 * pushed, and its pull request opened and checked out.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { getCACertificates, setDefaultCACertificates } from "node:tls"
import { agentWithThread, failuresOf, outputsOf, send, toolStep } from "../support/Conversation.ts"
import { gitRun } from "../support/github/FakeState.ts"
import * as Harness from "../support/github/Harness.ts"
import { hostCerts } from "../support/RunnerCerts.ts"
import * as TestServer from "../support/TestServer.ts"

const harness = Layer.unwrap(
  Effect.map(hostCerts("github.test"), (certs) => {
    setDefaultCACertificates([...getCACertificates("default"), certs.ca])
    return Harness.layer({}, certs)
  })
)

layer(harness, { timeout: TestServer.setupTimeout })("GitHub over https", (it) => {
  it.effect("the API and the workspace's git go over TLS; the remote stays https; check out, fetch again, push, open and check out the pull request", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      assert.match(gh.webUrl, /^https:\/\/github\.test:\d+$/)
      const repo = gh.state.addRepo("tls/app", { "README.md": "# app\n" })
      const { id } = yield* Harness.connect({ account: "tls", repositories: ["tls/app"] })
      const { thread } = yield* agentWithThread({
        workspace: { type: "managed", network: { mode: "restricted", allowDomains: ["example.com"] } },
        capabilities: { codehost: { connectionId: id, approval: "never", git: { branchPrefix: "agent/" } } }
      })
      const r = { repository: "tls/app" }
      const { parsed } = yield* send(
        thread.id,
        [
          toolStep("codehost_checkout", { ...r, newBranch: "agent/tls" }),
          toolStep("bash", {
            command:
              "cd app && echo 'over TLS' >> README.md && git commit -qam 'Say how' && git remote get-url origin && git config --get remote.origin.url"
          }),
          toolStep("codehost_push_branch", r),
          toolStep("codehost_checkout", { ...r, ref: "agent/tls" }),
          toolStep("codehost_status", r),
          toolStep("codehost_upsert_pull_request", { ...r, base: "main", title: "Say how" }),
          toolStep("codehost_checkout_pull_request", { ...r, number: 1 }),
          "/text done"
        ].join("\n")
      )
      assert.deepStrictEqual(failuresOf(parsed.chunks), [])
      const pushed = gitRun(repo.dir, "rev-parse", "agent/tls")
      const [checkout, bash, push, again, status, pull, pullCheckout] = outputsOf(parsed.chunks) as ReadonlyArray<
        Record<string, unknown>
      >
      assert.deepStrictEqual([checkout["branch"], push["sha"], again["sha"], status["sha"], pullCheckout["sha"]], [
        "agent/tls",
        pushed,
        pushed,
        pushed,
        pushed
      ])
      // Inside the sandbox the remote is the https URL (git is pointed at the proxy only for the git tools' own commands).
      assert.strictEqual(bash["stdout"], `${gh.webUrl}/tls/app.git\n${gh.webUrl}/tls/app.git\n`)
      assert.strictEqual(gitRun(repo.dir, "show", "agent/tls:README.md"), "# app\nover TLS")
      assert.deepStrictEqual([pull["number"], pull["created"], pullCheckout["branch"]], [1, true, "agent/tls"])
      assert.isAbove(gh.requests.filter((l) => l.startsWith("POST /tls/app.git/git-upload-pack")).length, 2)
      assert.strictEqual(gh.requests.filter((l) => l.startsWith("POST /tls/app.git/git-receive-pack")).length, 1)
    }))
})

/**
 * The code-hosting catalog at run time (spec 4.8, 8): which of the 50 tools a
 * run is offered (account tools only with account access and a user grant,
 * search only when named, allowed/blocked filters), write tools waiting for
 * approval by default (reads never do), a tool of each group against the
 * fake GitHub, and every answer the fake gave validated against GitHub's
 * OpenAPI description.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CodehostConnection } from "../../domain/Codehost.ts"
import { catalog } from "../../src/codehost/CatalogNames.ts"
import { agentWithThread, failuresOf, getRun, outputsOf, send, textOf, toolStep } from "../support/Conversation.ts"
import * as Harness from "../support/github/Harness.ts"
import { validator } from "../support/github/Shapes.ts"
import * as TestServer from "../support/TestServer.ts"

const { request, expectOk } = TestServer
const workspace = { type: "managed", network: { mode: "restricted", allowDomains: ["example.com"] } }

const offered = (threadId: string) =>
  Effect.map(
    send(threadId, "/show-tools"),
    ({ parsed }) =>
      (JSON.parse(textOf(parsed.message)) as ReadonlyArray<{ readonly name: string }>).map((t) => t.name).filter((n) =>
        n.startsWith("codehost_")
      )
  )

layer(Harness.layer(), { timeout: TestServer.setupTimeout })("the code-hosting catalog", (it) => {
  it.effect("50 tools: account tools need account access and a user grant, search only when named, allowed and blocked filter", () =>
    Effect.gen(function*() {
      assert.strictEqual(catalog.length, 50)
      assert.strictEqual(new Set(catalog.map((e) => e.name)).size, 50)
      const { id } = yield* Harness.connect({ account: "cat", repositories: ["cat/a"] })
      const plain = yield* agentWithThread({ workspace, capabilities: { codehost: { connectionId: id } } })
      const accountTools = catalog.filter((e) => e.account).map((e) => e.name)
      assert.strictEqual(accountTools.length, 9)
      assert.deepStrictEqual(
        [...(yield* offered(plain.thread.id))].sort(),
        catalog.filter((e) => !e.account && !e.search).map((e) => e.name).sort()
      )
      yield* expectOk(
        yield* request("PATCH", `/v1/codehost-connections/${id}`, {
          body: { access: { repositories: ["cat/a"], owners: ["cat"], account: true } }
        }),
        200,
        CodehostConnection
      )
      assert.strictEqual((yield* offered(plain.thread.id)).length, 49)
      const named = yield* agentWithThread({
        workspace,
        capabilities: {
          codehost: { connectionId: id, allowedTools: ["codehost_get_issue", "codehost_search_repositories"] }
        }
      })
      assert.deepStrictEqual([...(yield* offered(named.thread.id))].sort(), [
        "codehost_get_issue",
        "codehost_search_repositories"
      ])
      const blocked = yield* agentWithThread({
        workspace,
        capabilities: { codehost: { connectionId: id, blockedTools: ["codehost_merge_pull_request"] } }
      })
      const names = yield* offered(blocked.thread.id)
      assert.strictEqual(names.length, 48)
      assert.notInclude(names, "codehost_merge_pull_request")
    }))

  it.effect("write tools wait for approval by default and reads do not; gatedTools narrows an explicit mode; never waives", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      const { id } = yield* Harness.connect({ account: "gate", repositories: ["gate/a"] })
      const read = toolStep("codehost_list_issues", { repository: "gate/a" })
      const write = toolStep("codehost_create_issue", { repository: "gate/a", title: "From the agent" })
      const status = (codehost: Record<string, unknown>, step: string) =>
        Effect.gen(function*() {
          const { thread } = yield* agentWithThread({
            workspace,
            capabilities: { codehost: { connectionId: id, ...codehost } }
          })
          return (yield* getRun((yield* send(thread.id, step)).runId)).status
        })
      assert.strictEqual(yield* status({}, read), "completed")
      assert.strictEqual(yield* status({}, write), "waiting_for_approval")
      assert.strictEqual(gh.state.repo("gate", "a")?.issues.length, 0)
      assert.strictEqual(
        yield* status({ approval: "always", gatedTools: ["codehost_push_branch"] }, write),
        "completed"
      )
      assert.strictEqual(yield* status({ approval: "never" }, write), "completed")
      assert.deepStrictEqual(gh.state.repo("gate", "a")?.issues.map((i) => i.title), [
        "From the agent",
        "From the agent"
      ])
    }))

  it.effect("a tool of each group works against GitHub, and every answer the fake gave matches GitHub's OpenAPI description", () =>
    Effect.gen(function*() {
      const gh = yield* Harness.GitHub
      const repo = gh.state.addRepo("all/app", { "README.md": "hello\nworld\n", "src/main.ts": "export const x = 1\n" })
      repo.workflows.push({ id: 77, name: "CI", path: ".github/workflows/ci.yml" })
      repo.runs.push({
        id: 501,
        workflow_id: 77,
        status: "completed",
        conclusion: "failure",
        head_branch: "main",
        head_sha: gh.state.sha(repo, "main") ?? "",
        name: "CI"
      })
      const { id } = yield* Harness.connect({ account: "all", repositories: ["all/app"] })
      yield* request("PATCH", `/v1/codehost-connections/${id}`, {
        body: { access: { repositories: ["all/app"], owners: ["all"], account: true } }
      })
      const { thread } = yield* agentWithThread({
        workspace,
        capabilities: { codehost: { connectionId: id, approval: "never", git: { branchPrefix: "agent/" } } }
      })
      const r = { repository: "all/app" }
      const { runId, parsed } = yield* send(
        thread.id,
        [
          toolStep("codehost_get_repository", r),
          toolStep("codehost_get_file_content", { ...r, path: "README.md" }),
          toolStep("codehost_create_branch", { ...r, branch: "agent/x" }),
          toolStep("codehost_create_or_update_file", {
            ...r,
            branch: "agent/x",
            path: "NEW.md",
            content: "new\n",
            message: "Add NEW"
          }),
          toolStep("codehost_list_commits", { ...r, ref: "agent/x" }),
          toolStep("codehost_create_issue", { ...r, title: "Bug", body: "Broken", labels: ["bug"] }),
          toolStep("codehost_comment_issue", { ...r, number: 1, body: "Looking" }),
          toolStep("codehost_create_pull_request", { ...r, title: "Add NEW", head: "agent/x", base: "main" }),
          toolStep("codehost_list_pull_request_files", { ...r, number: 2 }),
          toolStep("codehost_list_workflow_runs", r),
          toolStep("codehost_rerun_workflow_run", { ...r, runId: 501 }),
          toolStep("codehost_create_gist", { files: { "a.txt": "gist" } }),
          "/text done"
        ].join("\n")
      )
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      assert.deepStrictEqual(failuresOf(parsed.chunks), [])
      const outputs = outputsOf(parsed.chunks) as ReadonlyArray<Record<string, unknown>>
      const files = outputsOf(parsed.chunks)[8]
      assert.strictEqual(outputs[0]["full_name"], "all/app")
      assert.strictEqual(outputs[1]["content"], "hello\nworld\n")
      assert.strictEqual((outputs[4] as unknown as ReadonlyArray<{ message: string }>)[0].message, "Add NEW")
      assert.deepStrictEqual(files, [{ filename: "NEW.md", status: "added", additions: 0, deletions: 0 }])
      assert.deepStrictEqual(repo.issues.map((i) => [i.title, i.labels, i.comments.map((c) => c.body)]), [["Bug", [
        "bug"
      ], ["Looking"]]])
      assert.strictEqual(repo.runs[0].status, "queued")
      assert.deepStrictEqual([...gh.state.gists.values()].map((g) => g.files), [{ "a.txt": "gist" }])

      const validate = validator()
      const problems = gh.answers.flatMap((a) => validate(a.method, a.path, a.status, a.body))
      assert.deepStrictEqual(problems, [])
      assert.isAbove(new Set(gh.answers.map((a) => `${a.method} ${a.path}`)).size, 15)
    }))
})

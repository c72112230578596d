/**
 * The pull-request tools against the fake GitHub, one turn each (spec 4.8
 * catalog): what the model reads (pull-request text, reviews, checks and
 * review threads fenced as untrusted), what GitHub was asked, with which
 * narrowed token, and what it holds after. A review pins the head SHA the
 * model inspected (refused, before anything is sent, when the branch moved:
 * GitHub itself would accept a review of an older commit); a merge pins it
 * too (GitHub answers 409 for a moved head), and the connection's merge policy
 * holds it back until the head's checks are green. A pull request is checked out
 * in the workspace at its head, one from a fork through refs/pull/<n>/head
 * (the fork itself is not granted).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CodehostConnection } from "../../domain/Codehost.ts"
import { agentWithThread } from "../support/Conversation.ts"
import type { Pull } from "../support/github/FakeState.ts"
import * as Harness from "../support/github/Harness.ts"
import { validator } from "../support/github/Shapes.ts"
import * as ToolCases from "../support/github/ToolCases.ts"
import * as TestServer from "../support/TestServer.ts"

const workspace = { type: "managed", network: { mode: "restricted", allowDomains: ["example.com"] } }
const readPulls = { pull_requests: "read" }
const writePulls = { pull_requests: "write" }
const app = ["pt/app"]
const merging = { contents: "write", pull_requests: "write", checks: "read", statuses: "read" }
/** A merge reads the head's check runs and commit statuses before it merges (the connection's merge policy). */
const checksOf = (sha: string) => [
  `GET /api/v3/repos/pt/app/commits/${sha}/check-runs?per_page=100`,
  `GET /api/v3/repos/pt/app/commits/${sha}/status?per_page=100`
]
const refusedBy = (sha: string, problem: string) =>
  `codehost_refused: The merge policy of this connection requires green checks on ${sha}: ${problem}. Wait for the checks, or fix them, and inspect the pull request again.`

layer(Harness.layer(), { timeout: TestServer.setupTimeout })("the pull-request tools", (it) => {
  it.effect(
    "each tool: what the model reads, what GitHub received, the token it used, what GitHub holds",
    () =>
      Effect.gen(function*() {
        const gh = yield* Harness.GitHub
        const repo = gh.state.addRepo("pt/app", { "README.md": "hello\n" })
        gh.state.addRepo("pt/other")
        const feature = gh.state.commitFiles(repo, "feature", { "NOTES.md": "notes\n" }, "Add notes")
        const pull: Pull = {
          number: 2,
          title: "Add notes",
          body: "Notes for all",
          state: "open",
          head: "feature",
          base: "main",
          merged: false,
          merge_sha: null,
          reviews: [{ id: 12, body: "Looks good", event: "APPROVE", commit_id: feature, user: "rev" }],
          threads: [{ id: "RT_1", path: "NOTES.md", line: 1, body: "Typo", resolved: false }],
          comments: [],
          user: "octo"
        }
        repo.pulls.push(pull)
        repo.checks.push({ sha: feature, name: "ci", status: "completed", conclusion: "success", summary: "all green" })
        // A pull request from a fork: its branch is not on the granted repository.
        const forkSha = gh.state.commitFiles(
          gh.state.fork(repo, "forker"),
          "fix",
          { "FIX.md": "fixed\n" },
          "Fix from a fork"
        )
        repo.pulls.push({
          number: 3,
          title: "Fix",
          body: "",
          state: "open",
          head: "fix",
          base: "main",
          merged: false,
          merge_sha: null,
          reviews: [],
          threads: [],
          comments: [],
          user: "forker",
          headRepo: "forker/app"
        })
        // Two repositories granted: no instruction files are read at each run's start.
        const { id } = yield* Harness.connect({ account: "pt", repositories: ["pt/app", "pt/other"] })
        const { thread } = yield* agentWithThread({
          workspace,
          capabilities: { codehost: { connectionId: id, approval: "never" } }
        })
        const r = { repository: "pt/app" }
        const summary = {
          number: 2,
          title: "Add notes",
          state: "open",
          draft: false,
          author: "octo",
          head: "feature",
          headSha: feature,
          base: "main",
          html_url: "https://github.example/pt/app/pull/2"
        }
        let moved = ""
        const commentId = () => pull.comments[0]?.id

        yield* ToolCases.run(thread.id, [
          {
            tool: "codehost_list_pull_requests",
            input: r,
            fenced: true,
            reads: [summary, {
              ...summary,
              number: 3,
              title: "Fix",
              author: "forker",
              head: "fix",
              headSha: forkSha,
              html_url: "https://github.example/pt/app/pull/3"
            }],
            sent: ["GET /api/v3/repos/pt/app/pulls?state=open&per_page=30"],
            tokens: [[app, readPulls]]
          },
          {
            tool: "codehost_get_pull_request",
            input: { ...r, number: 2 },
            fenced: true,
            reads: { ...summary, body: "Notes for all", merged: false, mergeable: true, comments: [] },
            sent: ["GET /api/v3/repos/pt/app/pulls/2", "GET /api/v3/repos/pt/app/issues/2/comments?per_page=100"],
            tokens: [[app, { pull_requests: "read", issues: "read" }]]
          },
          {
            tool: "codehost_comment_pull_request",
            input: { ...r, number: 2, body: "Thanks" },
            reads: () => ({
              id: commentId(),
              html_url: `https://github.example/pt/app/issues/2#issuecomment-${commentId()}`
            }),
            sent: ["POST /api/v3/repos/pt/app/issues/2/comments"],
            body: { body: "Thanks" },
            tokens: [[app, { issues: "write", pull_requests: "write" }]],
            after: () => assert.deepStrictEqual(pull.comments.map((c) => c.body), ["Thanks"])
          },
          {
            tool: "codehost_list_pull_request_files",
            input: { ...r, number: 2 },
            reads: [{ filename: "NOTES.md", status: "added", additions: 0, deletions: 0 }],
            sent: ["GET /api/v3/repos/pt/app/pulls/2/files?per_page=100"],
            tokens: [[app, readPulls]]
          },
          {
            tool: "codehost_list_pull_request_reviews",
            input: { ...r, number: 2 },
            fenced: true,
            reads: [{ id: 12, author: "rev", state: "APPROVED", body: "Looks good", commit: feature }],
            sent: ["GET /api/v3/repos/pt/app/pulls/2/reviews?per_page=100"],
            tokens: [[app, readPulls]]
          },
          {
            tool: "codehost_get_pull_request_checks",
            input: { ...r, number: 2 },
            fenced: true,
            reads: {
              headSha: feature,
              checks: [{ name: "ci", status: "completed", conclusion: "success", summary: "all green" }]
            },
            sent: [
              "GET /api/v3/repos/pt/app/pulls/2",
              `GET /api/v3/repos/pt/app/commits/${feature}/check-runs?per_page=100`
            ],
            tokens: [[app, { pull_requests: "read", checks: "read" }]]
          },
          {
            tool: "codehost_get_pull_request_review_threads",
            input: { ...r, number: 2 },
            fenced: true,
            reads: [{
              id: "RT_1",
              isResolved: false,
              path: "NOTES.md",
              line: 1,
              comments: { nodes: [{ body: "Typo", author: { login: "reviewer" } }] }
            }],
            sent: ["POST /api/graphql"],
            tokens: [[app, readPulls]]
          },
          {
            tool: "codehost_resolve_review_thread",
            input: { ...r, threadId: "RT_1" },
            reads: { id: "RT_1", isResolved: true },
            sent: ["POST /api/graphql"],
            tokens: [[app, writePulls]],
            after: () => assert.isTrue(pull.threads[0].resolved)
          },
          {
            tool: "codehost_create_pull_request_review",
            input: { ...r, number: 2, headSha: feature, event: "APPROVE", body: "Ship it" },
            reads: () => ({ id: pull.reviews[1]?.id, state: "APPROVED", commit: feature }),
            sent: ["GET /api/v3/repos/pt/app/pulls/2", "POST /api/v3/repos/pt/app/pulls/2/reviews"],
            body: { commit_id: feature, event: "APPROVE", body: "Ship it" },
            tokens: [[app, writePulls]]
          },
          {
            tool: "codehost_checkout_pull_request",
            input: { ...r, number: 2 },
            reads: { repository: "pt/app", path: "app", number: 2, branch: "feature", sha: feature, base: "main" },
            sent: ["GET /api/v3/repos/pt/app/pulls/2"],
            tokens: [[app, readPulls], [app, { contents: "read" }]]
          },
          {
            tool: "codehost_status",
            input: r,
            reads: { repository: "pt/app", path: "app", branch: "feature", sha: feature, changes: [] },
            sent: [],
            tokens: []
          },
          {
            tool: "codehost_checkout_pull_request",
            input: { ...r, number: 3 },
            reads: {
              repository: "pt/app",
              path: "app",
              number: 3,
              branch: "pull/3",
              sha: forkSha,
              base: "main",
              fork: "forker/app"
            },
            sent: ["GET /api/v3/repos/pt/app/pulls/3"],
            tokens: [[app, readPulls], [app, { contents: "read" }]]
          },
          {
            tool: "codehost_status",
            input: r,
            reads: { repository: "pt/app", path: "app", branch: "pull/3", sha: forkSha, changes: [] },
            sent: [],
            tokens: []
          },
          {
            // The branch moves on GitHub after the model inspected it: its review of the old head is refused.
            tool: "codehost_create_pull_request_review",
            input: { ...r, number: 2, headSha: feature, event: "APPROVE" },
            before: () => (moved = gh.state.commitFiles(
              repo,
              "feature",
              { "NOTES.md": "notes, reworded\n" },
              "Reword notes"
            )),
            reads: () =>
              `codehost_refused: The pull request's head is now ${moved}, not ${feature}: it changed since you inspected it; inspect it again.`,
            sent: ["GET /api/v3/repos/pt/app/pulls/2"],
            after: () => assert.strictEqual(pull.reviews.length, 2)
          },
          {
            tool: "codehost_merge_pull_request",
            input: { ...r, number: 2, headSha: feature },
            reads:
              "codehost_github_error: GitHub answered 409: Head branch was modified. Review and try the merge again.",
            sent: ["GET /api/v3/repos/pt/app/pulls/2", ...checksOf(feature), "PUT /api/v3/repos/pt/app/pulls/2/merge"],
            body: { sha: feature, merge_method: "merge" },
            tokens: [[app, merging]],
            after: () => assert.isFalse(pull.merged)
          },
          {
            // CI failed and a deployment is still pending on the head: the default policy (every reported check green) refuses.
            tool: "codehost_merge_pull_request",
            input: () => ({ ...r, number: 2, headSha: moved }),
            before: () => {
              repo.checks.push({
                sha: moved,
                name: "ci",
                status: "completed",
                conclusion: "failure",
                summary: "1 failed"
              })
              repo.statuses.push({ sha: moved, context: "deploy", state: "pending" })
            },
            reads: () => refusedBy(moved, "failed: ci; not finished: deploy"),
            sent: () => ["GET /api/v3/repos/pt/app/pulls/2", ...checksOf(moved)],
            tokens: [[app, merging]],
            after: () => assert.isFalse(pull.merged)
          }
        ])

        // The connection's policy names the checks that count: a required lint must be reported, and only it.
        const patched = yield* TestServer.expectOk(
          yield* TestServer.request("PATCH", `/v1/codehost-connections/${id}`, {
            body: { mergePolicy: { allChecksGreen: false, requiredChecks: ["lint"] } }
          }),
          200,
          CodehostConnection
        )
        assert.deepStrictEqual(patched.mergePolicy, { allChecksGreen: false, requiredChecks: ["lint"] })
        yield* ToolCases.run(thread.id, [
          {
            tool: "codehost_merge_pull_request",
            input: () => ({ ...r, number: 2, headSha: moved }),
            reads: () => refusedBy(moved, "required but not reported: lint"),
            sent: () => ["GET /api/v3/repos/pt/app/pulls/2", ...checksOf(moved)],
            after: () => assert.isFalse(pull.merged)
          },
          {
            tool: "codehost_merge_pull_request",
            input: () => ({ ...r, number: 2, headSha: moved, method: "squash" }),
            before: () => {
              repo.checks.push({ sha: moved, name: "lint", status: "completed", conclusion: "success", summary: "" })
            },
            reads: () => ({ merged: true, sha: moved }),
            sent:
              () => ["GET /api/v3/repos/pt/app/pulls/2", ...checksOf(moved), "PUT /api/v3/repos/pt/app/pulls/2/merge"],
            body: () => ({ sha: moved, merge_method: "squash" }),
            after: () => assert.deepStrictEqual([pull.merged, gh.state.sha(repo, "main")], [true, moved])
          }
        ])
        const validate = validator()
        assert.deepStrictEqual(gh.answers.flatMap((a) => validate(a.method, a.path, a.status, a.body)), [])
      }),
    120_000
  ) // a run per tool of the catalog: about 10 s alone, several times that beside the rest of the suite
})

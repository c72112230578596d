/**
 * The repository, issue, workflow and snippet tools against the fake GitHub,
 * one turn each (spec 4.8 catalog): what the model reads (commits, blame,
 * search hits, workflow metadata and gists fenced as untrusted), what GitHub
 * was asked, with which narrowed token (none for the tools acting as the
 * installing person), and what it holds after. Code search stays within the
 * granted repositories whatever the query says; repositories are created and
 * forked only among the connection's owners; repository search is offered
 * only when named, and finds beyond the grant without granting anything.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { agentWithThread } from "../support/Conversation.ts"
import { gitRun } from "../support/github/FakeState.ts"
import * as Harness from "../support/github/Harness.ts"
import { validator } from "../support/github/Shapes.ts"
import * as ToolCases from "../support/github/ToolCases.ts"
import * as TestServer from "../support/TestServer.ts"

const workspace = { type: "managed", network: { mode: "restricted", allowDomains: ["example.com"] } }
const app = ["rt/app"]
const readContents = { contents: "read" }
const writeIssues = { issues: "write" }
const writeActions = { actions: "write" }

layer(Harness.layer(), { timeout: TestServer.setupTimeout })(
  "the repository, issue, workflow and snippet tools",
  (it) => {
    it.effect(
      "each tool: what the model reads, what GitHub received, the token it used, what GitHub holds",
      () =>
        Effect.gen(function*() {
          const gh = yield* Harness.GitHub
          const repo = gh.state.addRepo("rt/app", { "README.md": "hello\nworld\n", "src/a.ts": "export const a = 1\n" })
          gh.state.addRepo("rt/other")
          const main = gh.state.sha(repo, "main") ?? ""
          const feature = gh.state.commitFiles(repo, "feature", { "NOTES.md": "notes\n" }, "Add notes")
          const issue = {
            number: 1,
            title: "Crash",
            body: "On start",
            state: "open" as const,
            labels: ["bug"],
            comments: [],
            user: "octo"
          }
          repo.issues.push(issue)
          repo.workflows.push({ id: 77, name: "CI", path: ".github/workflows/ci.yml" })
          const run = {
            id: 501,
            workflow_id: 77,
            status: "in_progress",
            conclusion: null as string | null,
            head_branch: "main",
            head_sha: main,
            name: "CI"
          }
          repo.runs.push(run)
          const { id } = yield* Harness.connect({
            account: "rt",
            repositories: ["rt/app", "rt/other"],
            login: "rtperson"
          })
          yield* TestServer.request("PATCH", `/v1/codehost-connections/${id}`, {
            body: { access: { repositories: ["rt/app", "rt/other"], owners: ["rt", "rtperson"], account: true } }
          })
          const gist = {
            id: "g1",
            owner: "rtperson",
            description: "Notes",
            public: false,
            files: { "n.md": "note" },
            comments: [{ id: 13, body: "Nice", user: "octo", created_at: "2026-01-03T00:00:00Z" }]
          }
          gh.state.gists.set("g1", gist)
          const { thread } = yield* agentWithThread({
            workspace,
            capabilities: { codehost: { connectionId: id, approval: "never", git: { baseBranches: ["main"] } } }
          })
          const r = { repository: "rt/app" }
          const date = gitRun(repo.dir, "show", "-s", "--format=%aI", feature)

          yield* ToolCases.run(thread.id, [
            {
              tool: "codehost_list_branches",
              input: r,
              reads: [{ name: "feature", sha: feature, protected: false }, {
                name: "main",
                sha: main,
                protected: true
              }],
              sent: ["GET /api/v3/repos/rt/app/branches?per_page=100"],
              tokens: [[app, readContents]]
            },
            {
              tool: "codehost_get_commit",
              input: { ...r, ref: feature },
              fenced: true,
              reads: {
                sha: feature,
                message: "Add notes",
                author: "Octo Cat",
                date,
                files: [{ filename: "NOTES.md", status: "added", additions: 0, deletions: 0 }]
              },
              sent: [`GET /api/v3/repos/rt/app/commits/${feature}`],
              tokens: [[app, readContents]]
            },
            {
              tool: "codehost_get_blame",
              input: { ...r, path: "README.md" },
              fenced: true,
              reads: {
                path: "README.md",
                ranges: [1, 2].map((line) => ({
                  startingLine: line,
                  endingLine: line,
                  commit: { oid: main, author: { name: "Octo Cat" }, message: "initial commit" }
                }))
              },
              sent: ["POST /api/graphql"],
              tokens: [[app, readContents]]
            },
            {
              // The query's own qualifiers are dropped: the search covers the granted repositories only.
              tool: "codehost_search_code",
              input: { query: "export repo:evil/x" },
              fenced: true,
              reads: { total_count: 1, items: [{ repository: "rt/app", path: "src/a.ts" }] },
              sent: ["GET /api/v3/search/code?q=export  repo:rt/app repo:rt/other&per_page=30"],
              tokens: [[["rt/app", "rt/other"], readContents]]
            },
            {
              tool: "codehost_create_repository",
              input: { owner: "rtperson", name: "fresh", description: "Fresh start" },
              reads: { full_name: "rtperson/fresh", html_url: "https://github.example/rtperson/fresh", private: true },
              sent: ["GET /api/v3/user", "POST /api/v3/user/repos"],
              body: { name: "fresh", description: "Fresh start", private: true },
              tokens: [],
              after: () => assert.isDefined(gh.state.repo("rtperson", "fresh"))
            },
            {
              tool: "codehost_create_repository",
              input: { owner: "rt", name: "public-one", private: false },
              reads: { full_name: "rt/public-one", html_url: "https://github.example/rt/public-one", private: false },
              sent: ["GET /api/v3/user", "POST /api/v3/orgs/rt/repos"],
              body: { name: "public-one", description: "", private: false },
              tokens: []
            },
            {
              tool: "codehost_create_repository",
              input: { owner: "elsewhere", name: "x" },
              reads:
                "codehost_refused: 'elsewhere' is not among the connection's owners (rt, rtperson); repositories may be created or forked only there.",
              sent: [],
              tokens: []
            },
            {
              tool: "codehost_fork_repository",
              input: { ...r, owner: "rtperson" },
              reads: { full_name: "rtperson/app", html_url: "https://github.example/rtperson/app" },
              sent: ["GET /api/v3/user", "POST /api/v3/repos/rt/app/forks"],
              tokens: [],
              after: () => assert.strictEqual(gh.state.repo("rtperson", "app")?.parent, "rt/app")
            },
            {
              tool: "codehost_list_labels",
              input: r,
              reads: [{ name: "bug", description: null, color: "ededed" }, {
                name: "enhancement",
                description: null,
                color: "ededed"
              }],
              sent: ["GET /api/v3/repos/rt/app/labels?per_page=100"],
              tokens: [[app, { issues: "read" }]]
            },
            {
              tool: "codehost_add_labels",
              input: { ...r, number: 1, labels: ["enhancement"] },
              reads: { labels: ["bug", "enhancement"] },
              sent: ["POST /api/v3/repos/rt/app/issues/1/labels"],
              body: { labels: ["enhancement"] },
              tokens: [[app, writeIssues]]
            },
            {
              tool: "codehost_remove_label",
              input: { ...r, number: 1, label: "bug" },
              reads: { labels: ["enhancement"] },
              sent: ["DELETE /api/v3/repos/rt/app/issues/1/labels/bug"],
              tokens: [[app, writeIssues]],
              after: () => assert.deepStrictEqual(repo.issues[0].labels, ["enhancement"])
            },
            {
              tool: "codehost_close_issue",
              input: { ...r, number: 1, reason: "not_planned" },
              reads: { number: 1, state: "closed" },
              sent: ["PATCH /api/v3/repos/rt/app/issues/1"],
              body: { state: "closed", state_reason: "not_planned" },
              tokens: [[app, writeIssues]],
              after: () =>
                assert.deepStrictEqual([repo.issues[0].state, repo.issues[0].state_reason], ["closed", "not_planned"])
            },
            {
              tool: "codehost_list_workflows",
              input: r,
              fenced: true,
              reads: [{ id: 77, name: "CI", path: ".github/workflows/ci.yml", state: "active" }],
              sent: ["GET /api/v3/repos/rt/app/actions/workflows?per_page=100"],
              tokens: [[app, { actions: "read" }]]
            },
            {
              tool: "codehost_get_workflow_run",
              input: { ...r, runId: 501 },
              fenced: true,
              reads: {
                id: 501,
                name: "CI",
                status: "in_progress",
                conclusion: null,
                branch: "main",
                sha: main,
                workflow_id: 77,
                html_url: "https://github.example/rt/app/actions/runs/501"
              },
              sent: ["GET /api/v3/repos/rt/app/actions/runs/501"],
              tokens: [[app, { actions: "read" }]]
            },
            {
              tool: "codehost_list_workflow_jobs",
              input: { ...r, runId: 501 },
              fenced: true,
              reads: [{ id: 5010, name: "build", status: "in_progress", conclusion: null, steps: [] }],
              sent: ["GET /api/v3/repos/rt/app/actions/runs/501/jobs?per_page=100"],
              tokens: [[app, { actions: "read" }]]
            },
            {
              tool: "codehost_trigger_workflow",
              input: { ...r, workflow: "ci.yml", ref: "main", inputs: { level: "full" } },
              reads: { triggered: true, workflow: "ci.yml", ref: "main" },
              sent: ["POST /api/v3/repos/rt/app/actions/workflows/ci.yml/dispatches"],
              body: { ref: "main", inputs: { level: "full" } },
              tokens: [[app, writeActions]],
              after: () =>
                assert.deepStrictEqual(repo.dispatches, [{ workflow_id: 77, ref: "main", inputs: { level: "full" } }])
            },
            {
              // Workflows run only on the agent's base branches when they are set.
              tool: "codehost_trigger_workflow",
              input: { ...r, workflow: "ci.yml", ref: "feature" },
              reads: "codehost_refused: Workflows may run only on 'main', not 'feature'.",
              sent: [],
              tokens: []
            },
            {
              tool: "codehost_cancel_workflow_run",
              input: { ...r, runId: 501 },
              reads: { cancelled: true, runId: 501 },
              sent: ["POST /api/v3/repos/rt/app/actions/runs/501/cancel"],
              tokens: [[app, writeActions]],
              after: () => assert.deepStrictEqual([run.status, run.conclusion], ["completed", "cancelled"])
            },
            {
              tool: "codehost_list_gists",
              input: {},
              fenced: true,
              reads: [{ id: "g1", description: "Notes", public: false, files: ["n.md"] }],
              sent: ["GET /api/v3/gists?per_page=30"],
              tokens: []
            },
            {
              tool: "codehost_get_gist",
              input: { gistId: "g1" },
              fenced: true,
              reads: {
                id: "g1",
                description: "Notes",
                public: false,
                html_url: "https://gist.github.example/g1",
                files: { "n.md": "note" }
              },
              sent: ["GET /api/v3/gists/g1"],
              tokens: []
            },
            {
              tool: "codehost_list_gist_comments",
              input: { gistId: "g1" },
              fenced: true,
              reads: [{ id: 13, author: "octo", body: "Nice" }],
              sent: ["GET /api/v3/gists/g1/comments"],
              tokens: []
            },
            {
              tool: "codehost_update_gist",
              input: { gistId: "g1", description: "Notes v2", files: { "n.md": "new note", "m.md": "more" } },
              reads: { id: "g1", updated: true },
              sent: ["PATCH /api/v3/gists/g1"],
              body: {
                files: { "n.md": { content: "new note" }, "m.md": { content: "more" } },
                description: "Notes v2"
              },
              tokens: [],
              after: () =>
                assert.deepStrictEqual([gist.description, gist.files], ["Notes v2", {
                  "n.md": "new note",
                  "m.md": "more"
                }])
            },
            {
              tool: "codehost_comment_gist",
              input: { gistId: "g1", body: "Updated" },
              reads: () => ({ id: gist.comments[1]?.id }),
              sent: ["POST /api/v3/gists/g1/comments"],
              body: { body: "Updated" },
              tokens: []
            },
            {
              tool: "codehost_delete_gist",
              input: { gistId: "g1" },
              reads: { id: "g1", deleted: true },
              sent: ["DELETE /api/v3/gists/g1"],
              tokens: [],
              after: () => assert.isFalse(gh.state.gists.has("g1"))
            }
          ])

          // Repository search, offered only when named: it finds beyond the grant and grants nothing.
          gh.state.addRepo("far/away")
          const named = yield* agentWithThread({
            workspace,
            capabilities: { codehost: { connectionId: id, allowedTools: ["codehost_search_repositories"] } }
          })
          yield* ToolCases.run(named.thread.id, [{
            tool: "codehost_search_repositories",
            input: { query: "far/away" },
            fenced: true,
            reads: {
              total_count: 1,
              items: [{
                full_name: "far/away",
                description: null,
                stars: 1,
                html_url: "https://github.example/far/away"
              }]
            },
            sent: ["GET /api/v3/search/repositories?q=far/away&per_page=30"],
            tokens: [[["rt/app", "rt/other"], { metadata: "read" }]]
          }])
          const validate = validator()
          assert.deepStrictEqual(
            gh.answers.flatMap((a) => validate(a.method, a.path, a.status, a.body)),
            []
          )
        }),
      120_000
    ) // a run per tool of the catalog: about 10 s alone, several times that beside the rest of the suite
  }
)

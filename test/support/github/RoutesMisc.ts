/** The fake's workflow (Actions), gist and GraphQL (blame, review threads) routes. */
import { type Answer, notFound, repoOf, type Request, type Route } from "./FakeGitHub.ts"
import { type Gist, gitRun, type Repo } from "./FakeState.ts"
import type { FakeState } from "./FakeState.ts"

const withRepo =
  (f: (state: FakeState, repo: Repo, req: Request) => Answer) => (state: FakeState, req: Request): Answer => {
    const repo = repoOf(state, req)
    return repo === undefined ? notFound : f(state, repo, req)
  }
const runBody = (repo: Repo, r: Repo["runs"][number]) => ({
  id: r.id,
  name: r.name,
  workflow_id: r.workflow_id,
  status: r.status,
  conclusion: r.conclusion,
  head_branch: r.head_branch,
  head_sha: r.head_sha,
  html_url: `https://github.example/${repo.owner}/${repo.name}/actions/runs/${r.id}`,
  run_number: r.id,
  event: "push"
})
const gistBody = (g: Gist) => ({
  id: g.id,
  description: g.description,
  public: g.public,
  owner: { login: g.owner, id: 7, type: "User" },
  files: Object.fromEntries(
    Object.entries(g.files).map(([name, content]) => [name, { filename: name, content, size: content.length }])
  ),
  comments: g.comments.length,
  html_url: `https://gist.github.example/${g.id}`
})
const gistOf = (state: FakeState, req: Request) => state.gists.get(req.params["gist_id"] ?? "")
const personOf = (req: Request) => (req.token?.kind === "user" ? req.token.login : "")

export const routes: ReadonlyArray<Route> = [
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/actions/workflows",
    auth: "installation",
    needs: { actions: "read" },
    handle: withRepo((_, repo) => ({
      status: 200,
      body: {
        total_count: repo.workflows.length,
        workflows: repo.workflows.map((w) => ({
          ...w,
          state: "active",
          html_url: "https://github.example/w",
          badge_url: "https://github.example/b"
        }))
      }
    }))
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/actions/runs",
    auth: "installation",
    needs: { actions: "read" },
    handle: withRepo((_, repo) => ({
      status: 200,
      body: { total_count: repo.runs.length, workflow_runs: repo.runs.map((r) => runBody(repo, r)) }
    }))
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/actions/runs/{run_id}",
    auth: "installation",
    needs: { actions: "read" },
    handle: withRepo((_, repo, req) => {
      const run = repo.runs.find((r) => r.id === Number(req.params["run_id"]))
      return run === undefined ? notFound : { status: 200, body: runBody(repo, run) }
    })
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
    auth: "installation",
    needs: { actions: "read" },
    handle: withRepo((_, repo, req) => {
      const run = repo.runs.find((r) => r.id === Number(req.params["run_id"]))
      return run === undefined
        ? notFound
        : {
          status: 200,
          body: {
            total_count: 1,
            jobs: [{
              id: run.id * 10,
              run_id: run.id,
              name: "build",
              status: run.status,
              conclusion: run.conclusion,
              head_sha: run.head_sha,
              steps: []
            }]
          }
        }
    })
  },
  {
    method: "POST",
    path: "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches",
    auth: "installation",
    needs: { actions: "write" },
    handle: withRepo((_, repo, req) => {
      const workflow = repo.workflows.find((w) =>
        String(w.id) === req.params["workflow_id"] || w.path.endsWith(`/${req.params["workflow_id"]}`)
      )
      if (workflow === undefined) return notFound
      const inputs = typeof req.body["inputs"] === "object" && req.body["inputs"] !== null
        ? req.body["inputs"] as Record<string, unknown>
        : {}
      repo.dispatches.push({ workflow_id: workflow.id, ref: String(req.body["ref"] ?? "main"), inputs })
      return { status: 204 }
    })
  },
  {
    method: "POST",
    path: "/repos/{owner}/{repo}/actions/runs/{run_id}/cancel",
    auth: "installation",
    needs: { actions: "write" },
    handle: withRepo((_, repo, req) => {
      const run = repo.runs.find((r) => r.id === Number(req.params["run_id"]))
      if (run === undefined) return notFound
      run.status = "completed"
      run.conclusion = "cancelled"
      return { status: 202, body: {} }
    })
  },
  {
    method: "POST",
    path: "/repos/{owner}/{repo}/actions/runs/{run_id}/rerun",
    auth: "installation",
    needs: { actions: "write" },
    handle: withRepo((_, repo, req) => {
      const run = repo.runs.find((r) => r.id === Number(req.params["run_id"]))
      if (run === undefined) return notFound
      run.status = "queued"
      run.conclusion = null
      return { status: 201, body: {} }
    })
  },
  {
    method: "GET",
    path: "/gists",
    auth: "user",
    handle: (state, req) => ({
      status: 200,
      body: [...state.gists.values()].filter((g) => g.owner === personOf(req)).map(gistBody)
    })
  },
  {
    method: "GET",
    path: "/gists/{gist_id}",
    auth: "user",
    handle: (state, req) => {
      const gist = gistOf(state, req)
      return gist === undefined ? notFound : { status: 200, body: gistBody(gist) }
    }
  },
  {
    method: "GET",
    path: "/gists/{gist_id}/comments",
    auth: "user",
    handle: (state, req) => {
      const gist = gistOf(state, req)
      return gist === undefined
        ? notFound
        : {
          status: 200,
          body: gist.comments.map((c) => ({
            id: c.id,
            body: c.body,
            user: { login: c.user, id: 7, type: "User" },
            created_at: c.created_at,
            updated_at: c.created_at
          }))
        }
    }
  },
  {
    method: "POST",
    path: "/gists",
    auth: "user",
    handle: (state, req) => {
      const files =
        (typeof req.body["files"] === "object" && req.body["files"] !== null ? req.body["files"] : {}) as Record<
          string,
          { content?: string }
        >
      const gist: Gist = {
        id: `g${state.id()}`,
        owner: personOf(req),
        description: String(req.body["description"] ?? ""),
        public: req.body["public"] === true,
        files: Object.fromEntries(Object.entries(files).map(([n, f]) => [n, String(f.content ?? "")])),
        comments: []
      }
      state.gists.set(gist.id, gist)
      return { status: 201, body: gistBody(gist) }
    }
  },
  {
    method: "PATCH",
    path: "/gists/{gist_id}",
    auth: "user",
    handle: (state, req) => {
      const gist = gistOf(state, req)
      if (gist === undefined || gist.owner !== personOf(req)) return notFound
      if (typeof req.body["description"] === "string") gist.description = req.body["description"]
      const files =
        (typeof req.body["files"] === "object" && req.body["files"] !== null ? req.body["files"] : {}) as Record<
          string,
          { content?: string } | null
        >
      for (const [name, file] of Object.entries(files)) {
        if (file === null) delete gist.files[name]
        else gist.files[name] = String(file.content ?? "")
      }
      return { status: 200, body: gistBody(gist) }
    }
  },
  {
    method: "DELETE",
    path: "/gists/{gist_id}",
    auth: "user",
    handle: (state, req) => {
      const gist = gistOf(state, req)
      if (gist === undefined || gist.owner !== personOf(req)) return notFound
      state.gists.delete(gist.id)
      return { status: 204 }
    }
  },
  {
    method: "POST",
    path: "/gists/{gist_id}/comments",
    auth: "user",
    handle: (state, req) => {
      const gist = gistOf(state, req)
      if (gist === undefined) return notFound
      const comment = {
        id: state.id(),
        body: String(req.body["body"] ?? ""),
        user: personOf(req),
        created_at: new Date().toISOString().replace(/\.\d+Z$/, "Z")
      }
      gist.comments.push(comment)
      return {
        status: 201,
        body: {
          id: comment.id,
          body: comment.body,
          user: { login: comment.user, id: 7, type: "User" },
          created_at: comment.created_at,
          updated_at: comment.created_at
        }
      }
    }
  },
  {
    // GraphQL is not in the REST description: blame and review threads, answered raw.
    method: "POST",
    path: "/graphql",
    auth: "installation",
    handle: (state, req) => {
      const query = String(req.body["query"] ?? "")
      const vars = (req.body["variables"] ?? {}) as Record<string, string | number>
      const repo = state.repo(String(vars["owner"] ?? ""), String(vars["name"] ?? ""))
      if (query.includes("blame") && repo !== undefined) {
        const sha = gitRun(repo.dir, "rev-parse", String(vars["ref"] ?? "main"))
        const lines = gitRun(repo.dir, "blame", "--line-porcelain", sha, "--", String(vars["path"])).split("\n").filter(
          (l) => l.startsWith("author ")
        )
        const ranges = lines.map((l, i) => ({
          startingLine: i + 1,
          endingLine: i + 1,
          commit: { oid: sha, author: { name: l.slice(7) }, message: "initial commit" }
        }))
        return { status: 200, raw: true, body: { data: { repository: { object: { blame: { ranges } } } } } }
      }
      if (query.includes("reviewThreads") && repo !== undefined) {
        const pull = repo.pulls.find((p) => p.number === Number(vars["number"]))
        const nodes = (pull?.threads ?? []).map((t) => ({
          id: t.id,
          isResolved: t.resolved,
          path: t.path,
          line: t.line,
          comments: { nodes: [{ body: t.body, author: { login: "reviewer" } }] }
        }))
        return { status: 200, raw: true, body: { data: { repository: { pullRequest: { reviewThreads: { nodes } } } } } }
      }
      if (query.includes("resolveReviewThread")) {
        const thread = [...state.repos.values()].flatMap((r) => r.pulls.flatMap((p) => p.threads)).find((t) =>
          t.id === vars["threadId"]
        )
        if (thread === undefined) {
          return { status: 200, raw: true, body: { errors: [{ message: "Could not resolve to a node" }] } }
        }
        thread.resolved = true
        return {
          status: 200,
          raw: true,
          body: { data: { resolveReviewThread: { thread: { id: thread.id, isResolved: true } } } }
        }
      }
      return { status: 200, raw: true, body: { errors: [{ message: "unsupported query" }] } }
    }
  }
]

/** The fake's issue and pull-request routes: issues, comments, labels, pulls, files, reviews, merges (check runs and statuses: RoutesChecks.ts). */
import { type Answer, notFound, repoOf, type Request, type Route } from "./FakeGitHub.ts"
import { gitRun, type Issue, type Pull, type Repo } from "./FakeState.ts"
import type { FakeState } from "./FakeState.ts"
import { repoBody } from "./RoutesApp.ts"

const user = (login: string) => ({ login, id: 7, type: "User" })
const label = (name: string) => ({
  id: 1,
  name,
  color: "ededed",
  default: false,
  node_id: "L_1",
  url: "https://github.example/l",
  description: null
})

const issueBody = (i: Issue) => ({
  id: i.number,
  number: i.number,
  title: i.title,
  body: i.body,
  state: i.state,
  user: user(i.user),
  labels: i.labels.map(label),
  comments: i.comments.length,
  html_url: `https://github.example/issues/${i.number}`
})

const pullBody = (state: FakeState, repo: Repo, p: Pull) => {
  const headSha = state.pullHead(repo, p).sha ?? p.merge_sha ?? "0000000000000000000000000000000000000000"
  const headRepo = p.headRepo ?? `${repo.owner}/${repo.name}`
  const headOwner = headRepo.split("/")[0]
  return {
    id: p.number,
    number: p.number,
    title: p.title,
    body: p.body,
    state: p.state,
    user: user(p.user),
    merged: p.merged,
    head: {
      ref: p.head,
      sha: headSha,
      label: `${headOwner}:${p.head}`,
      user: user(headOwner),
      repo: repoBody(state, headRepo)
    },
    base: {
      ref: p.base,
      sha: state.sha(repo, p.base) ?? headSha,
      label: `${repo.owner}:${p.base}`,
      user: user(repo.owner),
      repo: repoBody(state, `${repo.owner}/${repo.name}`)
    },
    html_url: `https://github.example/${repo.owner}/${repo.name}/pull/${p.number}`,
    mergeable: true
  }
}

export const withRepo =
  (f: (state: FakeState, repo: Repo, req: Request) => Answer) => (state: FakeState, req: Request): Answer => {
    const repo = repoOf(state, req)
    return repo === undefined ? notFound : f(state, repo, req)
  }
const issueOf = (repo: Repo, req: Request) => repo.issues.find((i) => i.number === Number(req.params["issue_number"]))
/** An issue or a pull request (on GitHub a pull request is an issue: its conversation lives there). */
const conversationOf = (repo: Repo, req: Request) =>
  issueOf(repo, req) ?? repo.pulls.find((p) => p.number === Number(req.params["issue_number"]))
const pullOf = (repo: Repo, req: Request) => repo.pulls.find((p) => p.number === Number(req.params["pull_number"]))
const nextNumber = (repo: Repo) => repo.issues.length + repo.pulls.length + 1
const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z")

export const routes: ReadonlyArray<Route> = [
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/issues",
    auth: "installation",
    needs: { issues: "read" },
    handle: withRepo((_, repo, req) => ({
      status: 200,
      body: repo.issues.filter((i) =>
        (req.query.get("state") ?? "open") === "all" || i.state === (req.query.get("state") ?? "open")
      ).map(issueBody)
    }))
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/issues/{issue_number}",
    auth: "installation",
    needs: { issues: "read" },
    handle: withRepo((_, repo, req) => {
      const issue = issueOf(repo, req)
      return issue === undefined ? notFound : { status: 200, body: issueBody(issue) }
    })
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/issues/{issue_number}/comments",
    auth: "installation",
    needs: { issues: "read" },
    handle: withRepo((_, repo, req) => {
      const issue = conversationOf(repo, req)
      return issue === undefined
        ? notFound
        : {
          status: 200,
          body: issue.comments.map((c) => ({ id: c.id, body: c.body, user: user(c.user), created_at: c.created_at }))
        }
    })
  },
  {
    method: "POST",
    path: "/repos/{owner}/{repo}/issues",
    auth: "installation",
    needs: { issues: "write" },
    handle: withRepo((_, repo, req) => {
      const issue: Issue = {
        number: nextNumber(repo),
        title: String(req.body["title"]),
        body: String(req.body["body"] ?? ""),
        state: "open",
        labels: Array.isArray(req.body["labels"]) ? req.body["labels"].map(String) : [],
        comments: [],
        user: "svc-test-app[bot]"
      }
      repo.issues.push(issue)
      return { status: 201, body: issueBody(issue) }
    })
  },
  {
    method: "PATCH",
    path: "/repos/{owner}/{repo}/issues/{issue_number}",
    auth: "installation",
    needs: { issues: "write" },
    handle: withRepo((_, repo, req) => {
      const issue = issueOf(repo, req)
      if (issue === undefined) return notFound
      if (req.body["state"] === "closed" || req.body["state"] === "open") issue.state = req.body["state"]
      if (req.body["state_reason"] === "completed" || req.body["state_reason"] === "not_planned") {
        issue.state_reason = req.body["state_reason"]
      }
      return { status: 200, body: issueBody(issue) }
    })
  },
  {
    method: "POST",
    path: "/repos/{owner}/{repo}/issues/{issue_number}/comments",
    auth: "installation",
    needs: { issues: "write" },
    handle: withRepo((state, repo, req) => {
      const issue = conversationOf(repo, req)
      if (issue === undefined) return notFound
      const comment = {
        id: state.id(),
        body: String(req.body["body"] ?? ""),
        user: "svc-test-app[bot]",
        created_at: now()
      }
      issue.comments.push(comment)
      const html_url = `https://github.example/${repo.owner}/${repo.name}/issues/${
        req.params["issue_number"]
      }#issuecomment-${comment.id}`
      return {
        status: 201,
        body: { id: comment.id, body: comment.body, user: user(comment.user), created_at: comment.created_at, html_url }
      }
    })
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/labels",
    auth: "installation",
    needs: { issues: "read" },
    handle: withRepo((_, repo) => ({ status: 200, body: repo.labels.map(label) }))
  },
  {
    method: "POST",
    path: "/repos/{owner}/{repo}/issues/{issue_number}/labels",
    auth: "installation",
    needs: { issues: "write" },
    handle: withRepo((_, repo, req) => {
      const issue = issueOf(repo, req)
      if (issue === undefined) return notFound
      for (const name of Array.isArray(req.body["labels"]) ? req.body["labels"].map(String) : []) {
        if (!issue.labels.includes(name)) issue.labels.push(name)
      }
      return { status: 200, body: issue.labels.map(label) }
    })
  },
  {
    method: "DELETE",
    path: "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
    auth: "installation",
    needs: { issues: "write" },
    handle: withRepo((_, repo, req) => {
      const issue = issueOf(repo, req)
      if (issue === undefined || !issue.labels.includes(req.params["name"] ?? "")) return notFound
      issue.labels = issue.labels.filter((l) => l !== req.params["name"])
      return { status: 200, body: issue.labels.map(label) }
    })
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/pulls",
    auth: "installation",
    needs: { pull_requests: "read" },
    handle: withRepo((state, repo, req) => ({
      status: 200,
      body: repo.pulls.filter((p) =>
        req.query.get("head") === null || `${repo.owner}:${p.head}` === req.query.get("head")
      ).filter((p) => (req.query.get("state") ?? "open") === "all" || p.state === (req.query.get("state") ?? "open"))
        .map((p) => pullBody(state, repo, p))
    }))
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/pulls/{pull_number}",
    auth: "installation",
    needs: { pull_requests: "read" },
    handle: withRepo((state, repo, req) => {
      const pull = pullOf(repo, req)
      return pull === undefined ? notFound : { status: 200, body: pullBody(state, repo, pull) }
    })
  },
  {
    method: "POST",
    path: "/repos/{owner}/{repo}/pulls",
    auth: "installation",
    needs: { pull_requests: "write" },
    handle: withRepo((state, repo, req) => {
      const head = String(req.body["head"] ?? "").replace(/^[^:]+:/, "")
      const base = String(req.body["base"] ?? "")
      if (state.sha(repo, head) === undefined || state.sha(repo, base) === undefined) {
        return { status: 422, body: { message: "Validation Failed" } }
      }
      if (repo.pulls.some((p) => p.head === head && p.base === base && p.state === "open")) {
        return { status: 422, body: { message: "A pull request already exists" } }
      }
      const pull: Pull = {
        number: nextNumber(repo),
        title: String(req.body["title"]),
        body: String(req.body["body"] ?? ""),
        state: "open",
        head,
        base,
        merged: false,
        merge_sha: null,
        reviews: [],
        threads: [],
        comments: [],
        user: "svc-test-app[bot]"
      }
      repo.pulls.push(pull)
      return { status: 201, body: pullBody(state, repo, pull) }
    })
  },
  {
    method: "PATCH",
    path: "/repos/{owner}/{repo}/pulls/{pull_number}",
    auth: "installation",
    needs: { pull_requests: "write" },
    handle: withRepo((state, repo, req) => {
      const pull = pullOf(repo, req)
      if (pull === undefined) return notFound
      if (typeof req.body["title"] === "string") pull.title = req.body["title"]
      if (typeof req.body["body"] === "string") pull.body = req.body["body"]
      return { status: 200, body: pullBody(state, repo, pull) }
    })
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/pulls/{pull_number}/files",
    auth: "installation",
    needs: { pull_requests: "read" },
    handle: withRepo((state, repo, req) => {
      const pull = pullOf(repo, req)
      if (pull === undefined) return notFound
      state.syncPullRefs(repo)
      const out = gitRun(
        repo.dir,
        "diff",
        "--name-status",
        `${pull.base}...${state.pullHead(repo, pull).sha ?? pull.base}`
      )
      return {
        status: 200,
        body: out.split("\n").filter((l) => l !== "").map((line) => {
          const [status, filename] = line.split("\t")
          return {
            sha: "0",
            filename,
            status: status === "A" ? "added" : status === "D" ? "removed" : "modified",
            additions: 0,
            deletions: 0,
            changes: 0,
            blob_url: "https://github.example/b",
            raw_url: "https://github.example/r",
            contents_url: "https://github.example/c"
          }
        })
      }
    })
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
    auth: "installation",
    needs: { pull_requests: "read" },
    handle: withRepo((_, repo, req) => {
      const pull = pullOf(repo, req)
      return pull === undefined ? notFound : {
        status: 200,
        body: pull.reviews.map((r) => ({
          id: r.id,
          body: r.body,
          state: r.event === "APPROVE" ? "APPROVED" : "COMMENTED",
          commit_id: r.commit_id,
          user: user(r.user),
          html_url: "https://github.example/r",
          pull_request_url: "https://github.example/p",
          _links: { html: { href: "https://github.example/r" }, pull_request: { href: "https://github.example/p" } }
        }))
      }
    })
  },
  {
    method: "POST",
    path: "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
    auth: "installation",
    needs: { pull_requests: "write" },
    handle: withRepo((state, repo, req) => {
      const pull = pullOf(repo, req)
      if (pull === undefined) return notFound
      // As on GitHub, a review may name any commit of the repository (one not at the head is outdated, not refused).
      state.syncPullRefs(repo)
      const commit = typeof req.body["commit_id"] === "string"
        ? state.sha(repo, req.body["commit_id"])
        : state.pullHead(repo, pull).sha
      if (commit === undefined) {
        return { status: 422, body: { message: "Unprocessable Entity", errors: ["No commit found for SHA"] } }
      }
      const review = {
        id: state.id(),
        body: String(req.body["body"] ?? ""),
        event: String(req.body["event"] ?? "COMMENT"),
        commit_id: commit,
        user: "svc-test-app[bot]"
      }
      pull.reviews.push(review)
      return {
        status: 200,
        body: {
          id: review.id,
          body: review.body,
          state: review.event === "APPROVE" ? "APPROVED" : "COMMENTED",
          commit_id: review.commit_id,
          user: user(review.user),
          html_url: "https://github.example/r",
          pull_request_url: "https://github.example/p",
          _links: { html: { href: "https://github.example/r" }, pull_request: { href: "https://github.example/p" } }
        }
      }
    })
  },
  {
    method: "PUT",
    path: "/repos/{owner}/{repo}/pulls/{pull_number}/merge",
    auth: "installation",
    needs: { contents: "write" },
    handle: withRepo((state, repo, req) => {
      const pull = pullOf(repo, req)
      if (pull === undefined) return notFound
      const head = state.pullHead(repo, pull).sha
      if (req.body["sha"] !== undefined && req.body["sha"] !== head) {
        return { status: 409, body: { message: "Head branch was modified. Review and try the merge again." } }
      }
      state.syncPullRefs(repo)
      gitRun(repo.dir, "update-ref", `refs/heads/${pull.base}`, head ?? "")
      pull.merged = true
      pull.state = "closed"
      pull.merge_sha = head ?? null
      return { status: 200, body: { sha: head, merged: true, message: "Pull Request successfully merged" } }
    })
  }
]

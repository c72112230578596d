/** The fake's repository routes: the repository, branches, contents, refs, commits and code search, read from git. */
import { type Answer, notFound, repoOf, type Request, type Route } from "./FakeGitHub.ts"
import { gitRun } from "./FakeState.ts"
import type { FakeState } from "./FakeState.ts"
import { repoBody } from "./RoutesApp.ts"

const commitBody = (dir: string, sha: string) => {
  const [author, email, date, message] = gitRun(dir, "show", "-s", "--format=%an%x00%ae%x00%aI%x00%s", sha).split(
    "\u0000"
  )
  return {
    sha,
    commit: { message, author: { name: author, email, date }, committer: { name: author, email, date } },
    html_url: `https://github.example/commit/${sha}`
  }
}

const refName = (ref: string) => ref.replace(/^refs\/heads\//, "")

/** A repository created for the person (or an organization): 201, or 422 when the name is taken. */
const create = (state: FakeState, owner: string, body: Record<string, unknown>): Answer => {
  const name = String(body["name"] ?? "")
  if (state.repo(owner, name) !== undefined) {
    return {
      status: 422,
      body: {
        message: "Repository creation failed.",
        errors: [{
          resource: "Repository",
          code: "custom",
          field: "name",
          message: "name already exists on this account"
        }]
      }
    }
  }
  state.addRepo(`${owner}/${name}`, { "README.md": `# ${name}\n` }, { private: body["private"] !== false })
  return { status: 201, body: repoBody(state, `${owner}/${name}`) }
}

const personOf = (req: Request) => (req.token?.kind === "user" ? req.token.login : "")

export const routes: ReadonlyArray<Route> = [
  {
    method: "GET",
    path: "/repos/{owner}/{repo}",
    auth: "token",
    handle: (state, req) => {
      const repo = repoOf(state, req)
      return repo === undefined ? notFound : { status: 200, body: repoBody(state, `${repo.owner}/${repo.name}`) }
    }
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/branches",
    auth: "installation",
    needs: { contents: "read" },
    handle: (state, req) => {
      const repo = repoOf(state, req)
      if (repo === undefined) return notFound
      return {
        status: 200,
        body: state.branches(repo).map((b) => ({
          name: b.name,
          commit: { sha: b.sha, url: "https://github.example/c" },
          protected: b.name === "main"
        }))
      }
    }
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/branches/{branch}",
    auth: "installation",
    needs: { contents: "read" },
    handle: (state, req): Answer => {
      const repo = repoOf(state, req)
      const name = req.params["branch"] ?? ""
      const sha = repo === undefined ? undefined : state.sha(repo, `refs/heads/${name}`)
      return sha === undefined
        ? notFound
        : {
          status: 200,
          body: {
            name,
            commit: { sha, url: "https://github.example/c" },
            protected: name === "main",
            _links: { html: "https://github.example/b", self: "https://github.example/b" },
            protection_url: "https://github.example/p"
          }
        }
    }
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/contents/{path}",
    auth: "installation",
    needs: { contents: "read" },
    handle: (state, req): Answer => {
      const repo = repoOf(state, req)
      const path = req.params["path"] ?? ""
      const ref = req.query.get("ref") ?? "main"
      if (repo === undefined || state.sha(repo, ref) === undefined) return notFound
      let content: string
      try {
        content = gitRun(repo.dir, "show", `${ref}:${path}`)
      } catch {
        return notFound
      }
      const sha = gitRun(repo.dir, "rev-parse", `${ref}:${path}`)
      return {
        status: 200,
        body: {
          type: "file",
          encoding: "base64",
          size: Buffer.byteLength(content),
          name: path.split("/").pop(),
          path,
          sha,
          content: Buffer.from(content + "\n").toString("base64")
        }
      }
    }
  },
  {
    method: "PUT",
    path: "/repos/{owner}/{repo}/contents/{path}",
    auth: "installation",
    needs: { contents: "write" },
    handle: (state, req): Answer => {
      const repo = repoOf(state, req)
      const branch = String(req.body["branch"] ?? "main")
      const parent = repo === undefined ? undefined : state.sha(repo, branch)
      if (repo === undefined || parent === undefined) return notFound
      const path = req.params["path"] ?? ""
      const content = Buffer.from(String(req.body["content"] ?? ""), "base64").toString("utf8")
      const message = String(req.body["message"] ?? "update")
      const sha = state.commitFiles(repo, branch, { [path]: content }, message)
      return {
        status: 200,
        body: {
          content: { name: path.split("/").pop(), path, sha: gitRun(repo.dir, "rev-parse", `${sha}:${path}`) },
          commit: { sha, message }
        }
      }
    }
  },
  {
    method: "POST",
    path: "/repos/{owner}/{repo}/git/refs",
    auth: "installation",
    needs: { contents: "write" },
    handle: (state, req): Answer => {
      const repo = repoOf(state, req)
      const ref = String(req.body["ref"] ?? "")
      const sha = String(req.body["sha"] ?? "")
      if (repo === undefined) return notFound
      if (state.sha(repo, refName(ref)) !== undefined) {
        return { status: 422, body: { message: "Reference already exists" } }
      }
      gitRun(repo.dir, "update-ref", ref, sha)
      return {
        status: 201,
        body: {
          ref,
          node_id: "R_1",
          url: "https://github.example/ref",
          object: { type: "commit", sha, url: "https://github.example/c" }
        }
      }
    }
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/git/ref/{ref}",
    auth: "installation",
    needs: { contents: "read" },
    handle: (state, req): Answer => {
      const repo = repoOf(state, req)
      const name = refName((req.params["ref"] ?? "").replace(/^heads\//, ""))
      const sha = repo === undefined ? undefined : state.sha(repo, name)
      return sha === undefined
        ? notFound
        : {
          status: 200,
          body: {
            ref: `refs/heads/${name}`,
            node_id: "R_1",
            url: "https://github.example/ref",
            object: { type: "commit", sha, url: "https://github.example/c" }
          }
        }
    }
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/commits",
    auth: "installation",
    needs: { contents: "read" },
    handle: (state, req): Answer => {
      const repo = repoOf(state, req)
      const ref = req.query.get("sha") ?? "main"
      if (repo === undefined || state.sha(repo, ref) === undefined) return notFound
      const shas = gitRun(repo.dir, "rev-list", "--max-count=30", ref).split("\n")
      return { status: 200, body: shas.map((sha) => commitBody(repo.dir, sha)) }
    }
  },
  {
    method: "GET",
    path: "/repos/{owner}/{repo}/commits/{ref}",
    auth: "installation",
    needs: { contents: "read" },
    handle: (state, req): Answer => {
      const repo = repoOf(state, req)
      const sha = repo === undefined ? undefined : state.sha(repo, req.params["ref"] ?? "")
      if (repo === undefined || sha === undefined) return notFound
      const files = gitRun(repo.dir, "show", "--format=", "--name-status", sha).split("\n").filter((l) => l !== "").map(
        (line) => {
          const [status, filename] = line.split("\t")
          return {
            filename,
            status: status === "A" ? "added" : status === "D" ? "removed" : "modified",
            sha,
            additions: 0,
            deletions: 0,
            changes: 0
          }
        }
      )
      return { status: 200, body: { ...commitBody(repo.dir, sha), files } }
    }
  },
  {
    method: "GET",
    path: "/search/code",
    auth: "installation",
    handle: (state, req): Answer => {
      const q = req.query.get("q") ?? ""
      const repos = [...q.matchAll(/repo:(\S+)/g)].map((m) => m[1].toLowerCase())
      const words = q.replace(/repo:\S+/g, "").trim()
      const allowed = req.token?.kind === "installation" ? req.token.repositories : []
      const items = repos.filter((r) => allowed.includes(r)).flatMap((full) => {
        const repo = state.repos.get(full)
        if (repo === undefined || words === "") return []
        let out = ""
        try {
          out = gitRun(repo.dir, "grep", "-l", "-F", words, "main")
        } catch {
          return []
        }
        return out.split("\n").filter((l) => l !== "").map((line) => {
          const path = line.replace(/^main:/, "")
          return {
            name: path.split("/").pop(),
            path,
            sha: "0",
            url: "https://github.example/x",
            git_url: "https://github.example/x",
            html_url: "https://github.example/x",
            score: 1,
            repository: { ...repoBody(state, `${repo.owner}/${repo.name}`) }
          }
        })
      })
      return { status: 200, body: { total_count: items.length, incomplete_results: false, items } }
    }
  },
  { method: "POST", path: "/user/repos", auth: "user", handle: (state, req) => create(state, personOf(req), req.body) },
  {
    method: "POST",
    path: "/orgs/{org}/repos",
    auth: "user",
    handle: (state, req) => create(state, req.params["org"] ?? "", req.body)
  },
  {
    method: "POST",
    path: "/repos/{owner}/{repo}/forks",
    auth: "user",
    handle: (state, req): Answer => {
      const repo = repoOf(state, req)
      if (repo === undefined) return notFound
      const owner = typeof req.body["organization"] === "string" ? req.body["organization"] : personOf(req)
      // GitHub answers the existing fork when there is one.
      if (state.repo(owner, repo.name) === undefined) state.fork(repo, owner)
      return { status: 202, body: { ...repoBody(state, `${owner}/${repo.name}`), fork: true } }
    }
  },
  {
    method: "GET",
    path: "/search/repositories",
    auth: "token",
    handle: (state, req): Answer => {
      const q = (req.query.get("q") ?? "").toLowerCase()
      const items = [...state.repos.values()].filter((r) =>
        `${r.owner}/${r.name}`.toLowerCase().includes(q.split(" ")[0])
      ).map((r) => ({ ...repoBody(state, `${r.owner}/${r.name}`), score: 1 }))
      return { status: 200, body: { total_count: items.length, incomplete_results: false, items } }
    }
  }
]

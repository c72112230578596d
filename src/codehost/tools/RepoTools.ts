/** Repositories and code (spec 4.8 catalog): 12 tools; create and fork act as the installing person. */
import { Effect } from "effect"
import { call } from "../GitHubCall.ts"
import {
  bool,
  type Input,
  inRepo,
  object,
  perPage,
  repoClient,
  type Scope,
  str,
  text,
  type Tool,
  ToolError
} from "../ToolKit.ts"

const read = { contents: "read" } as const

/** A branch the grant lets the agent write to: under `git.branchPrefix` when one is set. */
export const checkWritableBranch = (scope: Scope, branch: string): Effect.Effect<void, ToolError> => {
  const prefix = scope.grant.git?.branchPrefix
  return prefix !== undefined && !branch.startsWith(prefix)
    ? Effect.fail(ToolError.refused(`Branch '${branch}' is outside this agent's branch prefix '${prefix}'.`))
    : Effect.void
}

const commitSummary = (
  c: { sha: string; commit: { message: string; author: { name?: string; date?: string } | null } }
) => ({
  sha: c.sha,
  message: c.commit.message,
  author: c.commit.author?.name ?? null,
  date: c.commit.author?.date ?? null
})

const destination = (scope: Scope, owner: string) =>
  scope.owners.some((o) => o.toLowerCase() === owner.toLowerCase())
    ? Effect.void
    : Effect.fail(
      ToolError.refused(
        `'${owner}' is not among the connection's owners (${
          scope.owners.join(", ") || "none"
        }); repositories may be created or forked only there.`
      )
    )

export const repoTools: ReadonlyArray<Tool> = [
  {
    name: "codehost_get_repository",
    description:
      "Get a granted repository: description, visibility, default branch, language, topics and open issue count.",
    input: inRepo({}),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, { metadata: "read" })
        const { data } = yield* call((signal) =>
          gh.rest.repos.get({ owner: r.owner, repo: r.repo, request: { signal } })
        )
        return {
          full_name: data.full_name,
          description: data.description,
          private: data.private,
          default_branch: data.default_branch,
          language: data.language ?? null,
          topics: data.topics ?? [],
          open_issues_count: data.open_issues_count,
          html_url: data.html_url
        }
      })
  },
  {
    name: "codehost_list_branches",
    description: "List the branches of a granted repository with their head commit SHA and whether they are protected.",
    input: inRepo({}),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const { data } = yield* call((signal) =>
          gh.rest.repos.listBranches({ owner: r.owner, repo: r.repo, per_page: 100, request: { signal } })
        )
        return data.map((b) => ({ name: b.name, sha: b.commit.sha, protected: b.protected }))
      })
  },
  {
    name: "codehost_get_file_content",
    description:
      "Read a file (or list a directory) of a granted repository at a branch, tag or commit (default: the default branch).",
    input: inRepo({ path: str("Path in the repository."), ref: str("Branch, tag or commit SHA.") }, ["path"]),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const ref = input.optStr("ref")
        const { data } = yield* call((signal) =>
          gh.rest.repos.getContent({
            owner: r.owner,
            repo: r.repo,
            path: input.str("path"),
            ...(ref === undefined ? {} : { ref }),
            request: { signal }
          })
        )
        if (Array.isArray(data)) {
          return { path: input.str("path"), entries: data.map((e) => ({ name: e.name, path: e.path, type: e.type })) }
        }
        if (!("content" in data) || typeof data.content !== "string") {
          return { path: data.path, type: data.type }
        }
        return {
          path: data.path,
          sha: data.sha,
          size: data.size,
          content: Buffer.from(data.content, "base64").toString("utf8")
        }
      })
  },
  {
    name: "codehost_create_branch",
    description:
      "Create a branch on GitHub from another branch (default: the repository's default branch). The name must start with the agent's branch prefix when one is set.",
    input: inRepo({ branch: str("The new branch's name."), from: str("The branch to start from.") }, ["branch"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const r = yield* scope.repository(input)
        const branch = input.str("branch")
        yield* checkWritableBranch(scope, branch)
        const gh = yield* scope.installation([r.full], { contents: "write" })
        const from = input.optStr("from") ??
          (yield* call((signal) => gh.rest.repos.get({ owner: r.owner, repo: r.repo, request: { signal } }))).data
            .default_branch
        const base = yield* call((signal) =>
          gh.rest.git.getRef({ owner: r.owner, repo: r.repo, ref: `heads/${from}`, request: { signal } })
        )
        yield* call((signal) =>
          gh.rest.git.createRef({
            owner: r.owner,
            repo: r.repo,
            ref: `refs/heads/${branch}`,
            sha: base.data.object.sha,
            request: { signal }
          })
        )
        return { branch, sha: base.data.object.sha, from }
      })
  },
  {
    name: "codehost_create_or_update_file",
    description:
      "Commit one file's new content to a branch on GitHub (created or replaced). Give `sha` (the file's current blob SHA) to replace an existing file.",
    input: inRepo({
      path: str("Path in the repository."),
      content: text("The whole new content (UTF-8)."),
      message: str("Commit message."),
      branch: str("Branch to commit to."),
      sha: str("Blob SHA of the file being replaced.")
    }, ["path", "content", "message", "branch"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const r = yield* scope.repository(input)
        const branch = input.str("branch")
        yield* checkWritableBranch(scope, branch)
        const gh = yield* scope.installation([r.full], { contents: "write" })
        const sha = input.optStr("sha")
        const { data } = yield* call((signal) =>
          gh.rest.repos.createOrUpdateFileContents({
            owner: r.owner,
            repo: r.repo,
            path: input.str("path"),
            message: input.str("message"),
            branch,
            content: Buffer.from(input.str("content"), "utf8").toString("base64"),
            ...(sha === undefined ? {} : { sha }),
            request: { signal }
          })
        )
        return { path: input.str("path"), branch, commit: data.commit.sha ?? null }
      })
  },
  {
    name: "codehost_create_repository",
    description:
      "Create a repository as the installing person, under them or an organization listed in the connection's owners. It is not granted to the agent until the connection's access is updated.",
    input: object({
      owner: str("The account to create it under (one of the connection's owners)."),
      name: str("Repository name."),
      description: text("Description."),
      private: bool("Private (default true).")
    }, ["owner", "name"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const owner = input.str("owner")
        yield* destination(scope, owner)
        const gh = yield* scope.person
        const me = (yield* call((signal) => gh.rest.users.getAuthenticated({ request: { signal } }))).data.login
        const body = {
          name: input.str("name"),
          description: input.optStr("description") ?? "",
          private: input.raw["private"] !== false
        }
        const { data } = me.toLowerCase() === owner.toLowerCase()
          ? yield* call((signal) => gh.rest.repos.createForAuthenticatedUser({ ...body, request: { signal } }))
          : yield* call((signal) => gh.rest.repos.createInOrg({ org: owner, ...body, request: { signal } }))
        return { full_name: data.full_name, html_url: data.html_url, private: data.private }
      })
  },
  {
    name: "codehost_fork_repository",
    description:
      "Fork a granted repository as the installing person, into them or an organization listed in the connection's owners.",
    input: inRepo({ owner: str("Where the fork goes (one of the connection's owners).") }, ["owner"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const r = yield* scope.repository(input)
        const owner = input.str("owner")
        yield* destination(scope, owner)
        const gh = yield* scope.person
        const me = (yield* call((signal) => gh.rest.users.getAuthenticated({ request: { signal } }))).data.login
        const { data } = yield* call((signal) =>
          gh.rest.repos.createFork({
            owner: r.owner,
            repo: r.repo,
            ...(me.toLowerCase() === owner.toLowerCase() ? {} : { organization: owner }),
            request: { signal }
          })
        )
        return { full_name: data.full_name, html_url: data.html_url }
      })
  },
  {
    name: "codehost_list_commits",
    description:
      "List recent commits of a granted repository, newest first, on a branch or SHA and optionally touching a path.",
    input: inRepo({
      ref: str("Branch or SHA to list from (default the default branch)."),
      path: str("Only commits touching this path.")
    }),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const ref = input.optStr("ref")
        const path = input.optStr("path")
        const { data } = yield* call((signal) =>
          gh.rest.repos.listCommits({
            owner: r.owner,
            repo: r.repo,
            per_page: perPage,
            ...(ref === undefined ? {} : { sha: ref }),
            ...(path === undefined ? {} : { path }),
            request: { signal }
          })
        )
        return data.map(commitSummary)
      })
  },
  {
    name: "codehost_get_commit",
    description: "Get one commit of a granted repository: message, author and the files it changed.",
    input: inRepo({ ref: str("Commit SHA, branch or tag.") }, ["ref"]),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const { data } = yield* call((signal) =>
          gh.rest.repos.getCommit({ owner: r.owner, repo: r.repo, ref: input.str("ref"), request: { signal } })
        )
        return {
          ...commitSummary(data),
          files: (data.files ?? []).map((f) => ({
            filename: f.filename,
            status: f.status,
            additions: f.additions,
            deletions: f.deletions
          }))
        }
      })
  },
  {
    name: "codehost_get_blame",
    description:
      "Who last changed each line of a file of a granted repository (line ranges with their commit and author).",
    input: inRepo({ path: str("Path in the repository."), ref: str("Branch or SHA (default the default branch).") }, [
      "path"
    ]),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const query = `query($owner: String!, $name: String!, $ref: String!, $path: String!) {
          repository(owner: $owner, name: $name) { object(expression: $ref) { ... on Commit { blame(path: $path) { ranges {
            startingLine endingLine commit { oid message author { name } } } } } } } }`
        const answer = yield* call((signal) =>
          gh.graphql<{ repository: { object: { blame: { ranges: ReadonlyArray<unknown> } } | null } }>(query, {
            owner: r.owner,
            name: r.repo,
            ref: input.optStr("ref") ?? "HEAD",
            path: input.str("path"),
            request: { signal }
          })
        )
        return { path: input.str("path"), ranges: answer.repository.object?.blame.ranges ?? [] }
      })
  },
  {
    name: "codehost_search_code",
    description:
      "Search code in the granted repositories (GitHub code search syntax; the search is limited to them). Returns matching files.",
    input: object({ query: str("What to search for.") }, ["query"]),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        if (scope.repositories.length === 0) return yield* ToolError.refused("No repository is granted to this agent.")
        const gh = yield* scope.installation(scope.repositories, read)
        const q = `${input.str("query").replace(/\b(repo|org|user):\S+/g, "")} ${
          scope.repositories.map((r) => `repo:${r}`).join(" ")
        }`
        const { data } = yield* call((signal) => gh.rest.search.code({ q, per_page: perPage, request: { signal } }))
        return {
          total_count: data.total_count,
          items: data.items.map((i) => ({ repository: i.repository.full_name, path: i.path }))
        }
      })
  },
  {
    name: "codehost_search_repositories",
    description:
      "Search all of GitHub's repositories (GitHub search syntax). Finding a repository does not grant access to it.",
    input: object({ query: str("What to search for.") }, ["query"]),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const gh = yield* scope.installation(scope.repositories, { metadata: "read" })
        const { data } = yield* call((signal) =>
          gh.rest.search.repos({ q: input.str("query"), per_page: perPage, request: { signal } })
        )
        return {
          total_count: data.total_count,
          items: data.items.map((i) => ({
            full_name: i.full_name,
            description: i.description,
            stars: i.stargazers_count,
            html_url: i.html_url
          }))
        }
      })
  }
]

export type { Input }

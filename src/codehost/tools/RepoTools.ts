/** Repositories and code (spec 4.8 catalog): 12 tools; create and fork act as the installing person. */
import { Effect, Schema } from "effect"
import { Flag, NonEmpty, optional, Text } from "../../tools/ToolInput.ts"
import { call } from "../GitHubCall.ts"
import { type CodehostTool, inRepo, perPage, repoTool, type Scope, tool, ToolError } from "../ToolKit.ts"

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

const path = NonEmpty("Path in the repository.")

export const repoTools: ReadonlyArray<CodehostTool> = [
  repoTool({
    name: "codehost_get_repository",
    description:
      "Get a granted repository: description, visibility, default branch, language, topics and open issue count.",
    input: inRepo({}),
    permissions: { metadata: "read" },
    run: (_, { gh, r }) =>
      Effect.map(
        call((signal) => gh.rest.repos.get({ owner: r.owner, repo: r.repo, request: { signal } })),
        ({ data }) => ({
          full_name: data.full_name,
          description: data.description,
          private: data.private,
          default_branch: data.default_branch,
          language: data.language ?? null,
          topics: data.topics ?? [],
          open_issues_count: data.open_issues_count,
          html_url: data.html_url
        })
      )
  }),
  repoTool({
    name: "codehost_list_branches",
    description: "List the branches of a granted repository with their head commit SHA and whether they are protected.",
    input: inRepo({}),
    permissions: read,
    run: (_, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.repos.listBranches({ owner: r.owner, repo: r.repo, per_page: 100, request: { signal } })
        ),
        ({ data }) => data.map((b) => ({ name: b.name, sha: b.commit.sha, protected: b.protected }))
      )
  }),
  repoTool({
    name: "codehost_get_file_content",
    description:
      "Read a file (or list a directory) of a granted repository at a branch, tag or commit (default: the default branch).",
    input: inRepo({ path, ref: optional(NonEmpty("Branch, tag or commit SHA.")) }),
    untrusted: true,
    permissions: read,
    run: (input, { gh, r }) =>
      Effect.gen(function*() {
        const { data } = yield* call((signal) =>
          gh.rest.repos.getContent({
            owner: r.owner,
            repo: r.repo,
            path: input.path,
            ...(input.ref === undefined ? {} : { ref: input.ref }),
            request: { signal }
          })
        )
        if (Array.isArray(data)) {
          return { path: input.path, entries: data.map((e) => ({ name: e.name, path: e.path, type: e.type })) }
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
  }),
  repoTool({
    name: "codehost_create_branch",
    description:
      "Create a branch on GitHub from another branch (default: the repository's default branch). The name must start with the agent's branch prefix when one is set.",
    input: inRepo({
      branch: NonEmpty("The new branch's name."),
      from: optional(NonEmpty("The branch to start from."))
    }),
    run: ({ branch, from: given }, { r, scope }) =>
      Effect.gen(function*() {
        yield* checkWritableBranch(scope, branch)
        const gh = yield* scope.installation([r.full], { contents: "write" })
        const from = given ??
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
  }),
  repoTool({
    name: "codehost_create_or_update_file",
    description:
      "Commit one file's new content to a branch on GitHub (created or replaced). Give `sha` (the file's current blob SHA) to replace an existing file.",
    input: inRepo({
      path,
      content: Text("The whole new content (UTF-8)."),
      message: NonEmpty("Commit message."),
      branch: NonEmpty("Branch to commit to."),
      sha: optional(NonEmpty("Blob SHA of the file being replaced."))
    }),
    run: (input, { r, scope }) =>
      Effect.gen(function*() {
        const { branch, sha } = input
        yield* checkWritableBranch(scope, branch)
        const gh = yield* scope.installation([r.full], { contents: "write" })
        const { data } = yield* call((signal) =>
          gh.rest.repos.createOrUpdateFileContents({
            owner: r.owner,
            repo: r.repo,
            path: input.path,
            message: input.message,
            branch,
            content: Buffer.from(input.content, "utf8").toString("base64"),
            ...(sha === undefined ? {} : { sha }),
            request: { signal }
          })
        )
        return { path: input.path, branch, commit: data.commit.sha ?? null }
      })
  }),
  tool({
    name: "codehost_create_repository",
    description:
      "Create a repository as the installing person, under them or an organization listed in the connection's owners. It is not granted to the agent until the connection's access is updated.",
    input: Schema.Struct({
      owner: NonEmpty("The account to create it under (one of the connection's owners)."),
      name: NonEmpty("Repository name."),
      description: optional(Text("Description.")),
      private: optional(Flag("Private (default true)."))
    }),
    run: (input, scope) =>
      Effect.gen(function*() {
        const { owner } = input
        yield* destination(scope, owner)
        const gh = yield* scope.person
        const me = (yield* call((signal) => gh.rest.users.getAuthenticated({ request: { signal } }))).data.login
        const body = { name: input.name, description: input.description ?? "", private: input.private !== false }
        const { data } = me.toLowerCase() === owner.toLowerCase()
          ? yield* call((signal) => gh.rest.repos.createForAuthenticatedUser({ ...body, request: { signal } }))
          : yield* call((signal) => gh.rest.repos.createInOrg({ org: owner, ...body, request: { signal } }))
        return { full_name: data.full_name, html_url: data.html_url, private: data.private }
      })
  }),
  repoTool({
    name: "codehost_fork_repository",
    description:
      "Fork a granted repository as the installing person, into them or an organization listed in the connection's owners.",
    input: inRepo({ owner: NonEmpty("Where the fork goes (one of the connection's owners).") }),
    run: ({ owner }, { r, scope }) =>
      Effect.gen(function*() {
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
  }),
  repoTool({
    name: "codehost_list_commits",
    description:
      "List recent commits of a granted repository, newest first, on a branch or SHA and optionally touching a path.",
    input: inRepo({
      ref: optional(NonEmpty("Branch or SHA to list from (default the default branch).")),
      path: optional(NonEmpty("Only commits touching this path."))
    }),
    untrusted: true,
    permissions: read,
    run: ({ path, ref }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.repos.listCommits({
            owner: r.owner,
            repo: r.repo,
            per_page: perPage,
            ...(ref === undefined ? {} : { sha: ref }),
            ...(path === undefined ? {} : { path }),
            request: { signal }
          })
        ),
        ({ data }) => data.map(commitSummary)
      )
  }),
  repoTool({
    name: "codehost_get_commit",
    description: "Get one commit of a granted repository: message, author and the files it changed.",
    input: inRepo({ ref: NonEmpty("Commit SHA, branch or tag.") }),
    untrusted: true,
    permissions: read,
    run: ({ ref }, { gh, r }) =>
      Effect.map(
        call((signal) => gh.rest.repos.getCommit({ owner: r.owner, repo: r.repo, ref, request: { signal } })),
        ({ data }) => ({
          ...commitSummary(data),
          files: (data.files ?? []).map((f) => ({
            filename: f.filename,
            status: f.status,
            additions: f.additions,
            deletions: f.deletions
          }))
        })
      )
  }),
  repoTool({
    name: "codehost_get_blame",
    description:
      "Who last changed each line of a file of a granted repository (line ranges with their commit and author).",
    input: inRepo({ path, ref: optional(NonEmpty("Branch or SHA (default the default branch).")) }),
    untrusted: true,
    permissions: read,
    run: (input, { gh, r }) =>
      Effect.gen(function*() {
        const query = `query($owner: String!, $name: String!, $ref: String!, $path: String!) {
          repository(owner: $owner, name: $name) { object(expression: $ref) { ... on Commit { blame(path: $path) { ranges {
            startingLine endingLine commit { oid message author { name } } } } } } } }`
        const answer = yield* call((signal) =>
          gh.graphql<{ repository: { object: { blame: { ranges: ReadonlyArray<unknown> } } | null } }>(query, {
            owner: r.owner,
            name: r.repo,
            ref: input.ref ?? "HEAD",
            path: input.path,
            request: { signal }
          })
        )
        return { path: input.path, ranges: answer.repository.object?.blame.ranges ?? [] }
      })
  }),
  tool({
    name: "codehost_search_code",
    description:
      "Search code in the granted repositories (GitHub code search syntax; the search is limited to them). Returns matching files.",
    input: Schema.Struct({ query: NonEmpty("What to search for.") }),
    untrusted: true,
    run: ({ query }, scope) =>
      Effect.gen(function*() {
        if (scope.repositories.length === 0) return yield* ToolError.refused("No repository is granted to this agent.")
        const gh = yield* scope.installation(scope.repositories, read)
        const q = `${query.replace(/\b(repo|org|user):\S+/g, "")} ${
          scope.repositories.map((r) => `repo:${r}`).join(" ")
        }`
        const { data } = yield* call((signal) => gh.rest.search.code({ q, per_page: perPage, request: { signal } }))
        return {
          total_count: data.total_count,
          items: data.items.map((i) => ({ repository: i.repository.full_name, path: i.path }))
        }
      })
  }),
  tool({
    name: "codehost_search_repositories",
    description:
      "Search all of GitHub's repositories (GitHub search syntax). Finding a repository does not grant access to it.",
    input: Schema.Struct({ query: NonEmpty("What to search for.") }),
    untrusted: true,
    run: ({ query }, scope) =>
      Effect.gen(function*() {
        const gh = yield* scope.installation(scope.repositories, { metadata: "read" })
        const { data } = yield* call((signal) =>
          gh.rest.search.repos({ q: query, per_page: perPage, request: { signal } })
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
  })
]

/**
 * Pull requests (spec 4.8 catalog): 11 tools. Pull-request text, reviews and
 * check output are untrusted. A review and a merge pin the head SHA the model
 * inspected (`headSha`); a merge of a branch this thread pushed also requires
 * that SHA to be its last push, and the connection's merge policy to find the
 * head's checks green (MergeChecks.ts). Targets must be among `git.baseBranches` when set.
 */
import { Effect, Option } from "effect"
import { Count, Flag, NonEmpty, OneOf, optional, Text } from "../../tools/ToolInput.ts"
import { call } from "../GitHubCall.ts"
import { requireGreen } from "../MergeChecks.ts"
import { type CodehostTool, inRepo, perPage, repoTool, type Scope, ToolError } from "../ToolKit.ts"
import { commentOn } from "./IssueTools.ts"
import { checkWritableBranch } from "./RepoTools.ts"

const read = { pull_requests: "read" } as const
const write = { pull_requests: "write" } as const
const number = Count("The pull request number.")
const headSha = NonEmpty(
  "The head commit SHA you inspected (from codehost_get_pull_request); refused if the branch moved since."
)

/** A pull request may target (a workflow run on) only the agent's base branches (git.baseBranches) when they are set. */
export const checkBase = (
  scope: Scope,
  base: string,
  what = "Pull requests may target only"
): Effect.Effect<void, ToolError> => {
  const bases = scope.grant.git?.baseBranches
  return bases !== undefined && !bases.includes(base)
    ? Effect.fail(ToolError.refused(`${what} ${bases.map((b) => `'${b}'`).join(", ")}, not '${base}'.`))
    : Effect.void
}

const pullSummary = (
  p: {
    number: number
    title: string
    state: string
    draft?: boolean | undefined
    user: { login: string } | null
    head: { ref: string; sha: string }
    base: { ref: string }
    html_url: string
  }
) => ({
  number: p.number,
  title: p.title,
  state: p.state,
  draft: p.draft ?? false,
  author: p.user?.login ?? null,
  head: p.head.ref,
  headSha: p.head.sha,
  base: p.base.ref,
  html_url: p.html_url
})

export const pullTools: ReadonlyArray<CodehostTool> = [
  repoTool({
    name: "codehost_list_pull_requests",
    description: "List pull requests of a granted repository (open by default).",
    input: inRepo({ state: optional(OneOf(["open", "closed", "all"], "Which (default open).")) }),
    untrusted: true,
    permissions: read,
    run: ({ state = "open" }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.pulls.list({ owner: r.owner, repo: r.repo, state, per_page: perPage, request: { signal } })
        ),
        ({ data }) => data.map(pullSummary)
      )
  }),
  repoTool({
    name: "codehost_get_pull_request",
    description:
      "Read a pull request of a granted repository: title, body, branches, head SHA, mergeability and its comments.",
    input: inRepo({ number }),
    untrusted: true,
    permissions: { pull_requests: "read", issues: "read" },
    run: ({ number: pull_number }, { gh, r }) =>
      Effect.gen(function*() {
        const { data } = yield* call((signal) =>
          gh.rest.pulls.get({ owner: r.owner, repo: r.repo, pull_number, request: { signal } })
        )
        const comments = yield* call((signal) =>
          gh.rest.issues.listComments({
            owner: r.owner,
            repo: r.repo,
            issue_number: pull_number,
            per_page: 100,
            request: { signal }
          })
        )
        return {
          ...pullSummary(data),
          body: data.body ?? "",
          merged: data.merged,
          mergeable: data.mergeable ?? null,
          comments: comments.data.map((c) => ({ author: c.user?.login ?? null, body: c.body ?? "" }))
        }
      })
  }),
  repoTool({
    name: "codehost_list_pull_request_files",
    description: "List the files a pull request of a granted repository changes.",
    input: inRepo({ number }),
    permissions: read,
    run: ({ number }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.pulls.listFiles({
            owner: r.owner,
            repo: r.repo,
            pull_number: number,
            per_page: 100,
            request: { signal }
          })
        ),
        ({ data }) =>
          data.map((f) => ({ filename: f.filename, status: f.status, additions: f.additions, deletions: f.deletions }))
      )
  }),
  repoTool({
    name: "codehost_list_pull_request_reviews",
    description: "List the reviews of a pull request of a granted repository.",
    input: inRepo({ number }),
    untrusted: true,
    permissions: read,
    run: ({ number }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.pulls.listReviews({
            owner: r.owner,
            repo: r.repo,
            pull_number: number,
            per_page: 100,
            request: { signal }
          })
        ),
        ({ data }) =>
          data.map((v) => ({
            id: v.id,
            author: v.user?.login ?? null,
            state: v.state,
            body: v.body,
            commit: v.commit_id
          }))
      )
  }),
  repoTool({
    name: "codehost_create_pull_request",
    description:
      "Open a pull request in a granted repository from `head` into `base` (one of the agent's base branches when they are set).",
    input: inRepo({
      title: NonEmpty("Title."),
      head: NonEmpty("The branch with the changes."),
      base: NonEmpty("The branch to merge into."),
      body: optional(Text("Description (Markdown).")),
      draft: optional(Flag("Open as a draft."))
    }),
    run: ({ base, body = "", draft = false, head, title }, { r, scope }) =>
      Effect.gen(function*() {
        yield* checkBase(scope, base)
        yield* checkWritableBranch(scope, head)
        const gh = yield* scope.installation([r.full], write)
        const { data } = yield* call((signal) =>
          gh.rest.pulls.create({ owner: r.owner, repo: r.repo, title, head, base, body, draft, request: { signal } })
        )
        return pullSummary(data)
      })
  }),
  repoTool({
    name: "codehost_comment_pull_request",
    description: "Comment on a pull request of a granted repository (a conversation comment, not a review).",
    input: inRepo({ number, body: NonEmpty("The comment (Markdown).") }),
    permissions: { issues: "write", pull_requests: "write" },
    run: ({ body, number }, { gh, r }) => commentOn(gh, r, number, body)
  }),
  repoTool({
    name: "codehost_get_pull_request_checks",
    description: "The check runs (CI) of a pull request's head commit in a granted repository, with their conclusions.",
    input: inRepo({ number }),
    untrusted: true,
    permissions: { pull_requests: "read", checks: "read" },
    run: ({ number }, { gh, r }) =>
      Effect.gen(function*() {
        const pull = yield* call((signal) =>
          gh.rest.pulls.get({ owner: r.owner, repo: r.repo, pull_number: number, request: { signal } })
        )
        const { data } = yield* call((signal) =>
          gh.rest.checks.listForRef({
            owner: r.owner,
            repo: r.repo,
            ref: pull.data.head.sha,
            per_page: 100,
            request: { signal }
          })
        )
        return {
          headSha: pull.data.head.sha,
          checks: data.check_runs.map((c) => ({
            name: c.name,
            status: c.status,
            conclusion: c.conclusion,
            summary: c.output.summary ?? null
          }))
        }
      })
  }),
  repoTool({
    name: "codehost_get_pull_request_review_threads",
    description:
      "The review comment threads of a pull request of a granted repository (path, line, comments, resolved or not), with their ids for codehost_resolve_review_thread.",
    input: inRepo({ number }),
    untrusted: true,
    permissions: read,
    run: ({ number }, { gh, r }) => {
      const query =
        `query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { pullRequest(number: $number) {
          reviewThreads(first: 100) { nodes { id isResolved path line comments(first: 50) { nodes { body author { login } } } } } } } }`
      return Effect.map(
        call((signal) =>
          gh.graphql<{ repository: { pullRequest: { reviewThreads: { nodes: ReadonlyArray<unknown> } } | null } }>(
            query,
            { owner: r.owner, name: r.repo, number, request: { signal } }
          )
        ),
        (answer) => answer.repository.pullRequest?.reviewThreads.nodes ?? []
      )
    }
  }),
  repoTool({
    name: "codehost_create_pull_request_review",
    description:
      "Review a pull request of a granted repository at the head SHA you inspected: comment, approve or request changes.",
    input: inRepo({
      number,
      headSha,
      event: OneOf(["COMMENT", "APPROVE", "REQUEST_CHANGES"], "The verdict."),
      body: optional(Text("The review's text."))
    }),
    permissions: write,
    run: ({ body = "", event, headSha: sha, number }, { gh, r }) =>
      Effect.gen(function*() {
        const pull = yield* call((signal) =>
          gh.rest.pulls.get({ owner: r.owner, repo: r.repo, pull_number: number, request: { signal } })
        )
        // GitHub accepts a review of an older commit (it shows as outdated): a verdict on code the model did not see is refused here.
        if (pull.data.head.sha !== sha) {
          return yield* ToolError.refused(
            `The pull request's head is now ${pull.data.head.sha}, not ${sha}: it changed since you inspected it; inspect it again.`
          )
        }
        const { data } = yield* call((signal) =>
          gh.rest.pulls.createReview({
            owner: r.owner,
            repo: r.repo,
            pull_number: number,
            commit_id: sha,
            event,
            body,
            request: { signal }
          })
        )
        return { id: data.id, state: data.state, commit: data.commit_id }
      })
  }),
  repoTool({
    name: "codehost_resolve_review_thread",
    description:
      "Mark a review thread of a pull request as resolved (thread ids come from codehost_get_pull_request_review_threads).",
    input: inRepo({ threadId: NonEmpty("The review thread's id.") }),
    permissions: write,
    run: ({ threadId }, { gh, r }) => {
      const mutation =
        "mutation($threadId: ID!) { resolveReviewThread(input: { threadId: $threadId }) { thread { id isResolved } } }"
      return Effect.map(
        call((signal) =>
          gh.graphql<{ resolveReviewThread: { thread: unknown } }>(mutation, {
            threadId,
            owner: r.owner,
            name: r.repo,
            request: { signal }
          })
        ),
        (answer) => answer.resolveReviewThread.thread
      )
    }
  }),
  repoTool({
    name: "codehost_merge_pull_request",
    description:
      "Merge a pull request of a granted repository at the head SHA you inspected (refused if the branch moved, if this thread pushed it and that SHA is not its last push, or if the connection's merge policy finds its checks missing, pending or failed).",
    input: inRepo({
      number,
      headSha,
      method: optional(OneOf(["merge", "squash", "rebase"], "How (default merge)."))
    }),
    permissions: { contents: "write", pull_requests: "write", checks: "read", statuses: "read" },
    run: ({ headSha: sha, method = "merge", number }, { gh, r, scope }) =>
      Effect.gen(function*() {
        const pull = yield* call((signal) =>
          gh.rest.pulls.get({ owner: r.owner, repo: r.repo, pull_number: number, request: { signal } })
        )
        yield* checkBase(scope, pull.data.base.ref)
        const owned = yield* scope.branchOwner(r.full, pull.data.head.ref)
        if (Option.isSome(owned) && owned.value.lastPushedSha !== null && owned.value.lastPushedSha !== sha) {
          return yield* ToolError.refused(
            `The last push of '${pull.data.head.ref}' was ${owned.value.lastPushedSha}, not ${sha}; inspect the pull request again.`
          )
        }
        yield* requireGreen(gh, r, sha, scope.mergePolicy)
        const { data } = yield* call((signal) =>
          gh.rest.pulls.merge({
            owner: r.owner,
            repo: r.repo,
            pull_number: number,
            sha,
            merge_method: method,
            request: { signal }
          })
        )
        return { merged: data.merged, sha: data.sha }
      })
  })
]

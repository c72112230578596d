/** Issues and labels (spec 4.8 catalog): 8 tools. Issue bodies and comments are untrusted. */
import type { Octokit } from "@octokit/rest"
import { Effect, Schema } from "effect"
import { Count, NonEmpty, NonEmptyList, OneOf, optional, Text } from "../../tools/ToolInput.ts"
import { call } from "../GitHubCall.ts"
import { type CodehostTool, inRepo, perPage, type Repo, repoTool } from "../ToolKit.ts"

const read = { issues: "read" } as const
const write = { issues: "write" } as const

type Label = string | { readonly name?: string | undefined }
const names = (labels: ReadonlyArray<Label>) => labels.map((l) => (typeof l === "string" ? l : l.name ?? ""))

export const issueSummary = (
  i: {
    number: number
    title: string
    state: string
    labels: ReadonlyArray<Label>
    user: { login: string } | null
    comments: number
    html_url: string
  }
) => ({
  number: i.number,
  title: i.title,
  state: i.state,
  labels: names(i.labels),
  author: i.user?.login ?? null,
  comments: i.comments,
  html_url: i.html_url
})

const number = Count("The issue number.")

/** A conversation comment on an issue or a pull request (GitHub keeps both as issue comments). */
export const commentOn = (gh: Octokit, r: Repo, number: number, body: string) =>
  Effect.map(
    call((signal) =>
      gh.rest.issues.createComment({ owner: r.owner, repo: r.repo, issue_number: number, body, request: { signal } })
    ),
    ({ data }) => ({ id: data.id, html_url: data.html_url })
  )

export const issueTools: ReadonlyArray<CodehostTool> = [
  repoTool({
    name: "codehost_list_issues",
    description: "List issues of a granted repository (open by default), newest first.",
    input: inRepo({
      state: optional(OneOf(["open", "closed", "all"], "Which issues (default open).")),
      labels: optional(NonEmptyList("Only issues with all these labels."))
    }),
    untrusted: true,
    permissions: read,
    run: ({ labels = [], state = "open" }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.issues.listForRepo({
            owner: r.owner,
            repo: r.repo,
            state,
            per_page: perPage,
            ...(labels.length === 0 ? {} : { labels: labels.join(",") }),
            request: { signal }
          })
        ),
        ({ data }) => data.map(issueSummary)
      )
  }),
  repoTool({
    name: "codehost_get_issue",
    description: "Read an issue of a granted repository with its body and comments.",
    input: inRepo({ number }),
    untrusted: true,
    permissions: read,
    run: ({ number: issue_number }, { gh, r }) =>
      Effect.gen(function*() {
        const { data } = yield* call((signal) =>
          gh.rest.issues.get({ owner: r.owner, repo: r.repo, issue_number, request: { signal } })
        )
        const comments = yield* call((signal) =>
          gh.rest.issues.listComments({
            owner: r.owner,
            repo: r.repo,
            issue_number,
            per_page: 100,
            request: { signal }
          })
        )
        return {
          ...issueSummary(data),
          body: data.body ?? "",
          comments: comments.data.map((c) => ({
            id: c.id,
            author: c.user?.login ?? null,
            body: c.body ?? "",
            created_at: c.created_at
          }))
        }
      })
  }),
  repoTool({
    name: "codehost_create_issue",
    description: "Open an issue in a granted repository.",
    input: inRepo({
      title: NonEmpty("Title."),
      body: optional(Text("Body (Markdown).")),
      labels: optional(NonEmptyList("Labels to set."))
    }),
    permissions: write,
    run: ({ body = "", labels = [], title }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.issues.create({
            owner: r.owner,
            repo: r.repo,
            title,
            body,
            ...(labels.length === 0 ? {} : { labels: [...labels] }),
            request: { signal }
          })
        ),
        ({ data }) => ({ number: data.number, html_url: data.html_url })
      )
  }),
  repoTool({
    name: "codehost_comment_issue",
    description: "Comment on an issue of a granted repository.",
    input: inRepo({ number, body: NonEmpty("The comment (Markdown).") }),
    permissions: write,
    run: ({ body, number }, { gh, r }) => commentOn(gh, r, number, body)
  }),
  repoTool({
    name: "codehost_close_issue",
    description: "Close an issue of a granted repository, as completed or not planned.",
    input: inRepo({ number, reason: optional(OneOf(["completed", "not_planned"], "Why (default completed).")) }),
    permissions: write,
    run: ({ number, reason = "completed" }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.issues.update({
            owner: r.owner,
            repo: r.repo,
            issue_number: number,
            state: "closed",
            state_reason: reason,
            request: { signal }
          })
        ),
        ({ data }) => ({ number: data.number, state: data.state })
      )
  }),
  repoTool({
    name: "codehost_list_labels",
    description: "List the labels defined in a granted repository.",
    input: inRepo({}),
    permissions: read,
    run: (_, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.issues.listLabelsForRepo({ owner: r.owner, repo: r.repo, per_page: 100, request: { signal } })
        ),
        ({ data }) => data.map((l) => ({ name: l.name, description: l.description ?? null, color: l.color }))
      )
  }),
  repoTool({
    name: "codehost_add_labels",
    description: "Add labels to an issue or pull request of a granted repository.",
    input: inRepo({ number, labels: NonEmptyList("Labels to add.").check(Schema.isMinLength(1)) }),
    permissions: write,
    run: ({ labels, number }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.issues.addLabels({
            owner: r.owner,
            repo: r.repo,
            issue_number: number,
            labels: [...labels],
            request: { signal }
          })
        ),
        ({ data }) => ({ labels: data.map((l) => l.name) })
      )
  }),
  repoTool({
    name: "codehost_remove_label",
    description: "Remove one label from an issue or pull request of a granted repository.",
    input: inRepo({ number, label: NonEmpty("The label to remove.") }),
    permissions: write,
    run: ({ label, number }, { gh, r }) =>
      Effect.map(
        call((signal) =>
          gh.rest.issues.removeLabel({
            owner: r.owner,
            repo: r.repo,
            issue_number: number,
            name: label,
            request: { signal }
          })
        ),
        ({ data }) => ({ labels: data.map((l) => l.name) })
      )
  })
]

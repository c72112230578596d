/** Issues and labels (spec 4.8 catalog): 8 tools. Issue bodies and comments are untrusted. */
import { Effect } from "effect"
import { call } from "../GitHubCall.ts"
import { inRepo, int, perPage, repoClient, str, strs, text, type Tool } from "../ToolKit.ts"

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

const number = int("The issue number.")

export const issueTools: ReadonlyArray<Tool> = [
  {
    name: "codehost_list_issues",
    description: "List issues of a granted repository (open by default), newest first.",
    input: inRepo({
      state: { type: "string", enum: ["open", "closed", "all"], description: "Which issues (default open)." },
      labels: strs("Only issues with all these labels.")
    }),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const labels = input.strs("labels")
        const state = input.optStr("state") === "closed" ? "closed" : input.optStr("state") === "all" ? "all" : "open"
        const { data } = yield* call((signal) =>
          gh.rest.issues.listForRepo({
            owner: r.owner,
            repo: r.repo,
            state,
            per_page: perPage,
            ...(labels.length === 0 ? {} : { labels: labels.join(",") }),
            request: { signal }
          })
        )
        return data.map(issueSummary)
      })
  },
  {
    name: "codehost_get_issue",
    description: "Read an issue of a granted repository with its body and comments.",
    input: inRepo({ number }, ["number"]),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const issue_number = input.int("number")
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
  },
  {
    name: "codehost_create_issue",
    description: "Open an issue in a granted repository.",
    input: inRepo({ title: str("Title."), body: text("Body (Markdown)."), labels: strs("Labels to set.") }, ["title"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, write)
        const labels = input.strs("labels")
        const { data } = yield* call((signal) =>
          gh.rest.issues.create({
            owner: r.owner,
            repo: r.repo,
            title: input.str("title"),
            body: input.optStr("body") ?? "",
            ...(labels.length === 0 ? {} : { labels: [...labels] }),
            request: { signal }
          })
        )
        return { number: data.number, html_url: data.html_url }
      })
  },
  {
    name: "codehost_comment_issue",
    description: "Comment on an issue of a granted repository.",
    input: inRepo({ number, body: str("The comment (Markdown).") }, ["number", "body"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, write)
        const { data } = yield* call((signal) =>
          gh.rest.issues.createComment({
            owner: r.owner,
            repo: r.repo,
            issue_number: input.int("number"),
            body: input.str("body"),
            request: { signal }
          })
        )
        return { id: data.id, html_url: data.html_url }
      })
  },
  {
    name: "codehost_close_issue",
    description: "Close an issue of a granted repository, as completed or not planned.",
    input: inRepo({
      number,
      reason: { type: "string", enum: ["completed", "not_planned"], description: "Why (default completed)." }
    }, ["number"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, write)
        const state_reason = input.optStr("reason") === "not_planned" ? "not_planned" : "completed"
        const { data } = yield* call((signal) =>
          gh.rest.issues.update({
            owner: r.owner,
            repo: r.repo,
            issue_number: input.int("number"),
            state: "closed",
            state_reason,
            request: { signal }
          })
        )
        return { number: data.number, state: data.state }
      })
  },
  {
    name: "codehost_list_labels",
    description: "List the labels defined in a granted repository.",
    input: inRepo({}),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, read)
        const { data } = yield* call((signal) =>
          gh.rest.issues.listLabelsForRepo({ owner: r.owner, repo: r.repo, per_page: 100, request: { signal } })
        )
        return data.map((l) => ({ name: l.name, description: l.description ?? null, color: l.color }))
      })
  },
  {
    name: "codehost_add_labels",
    description: "Add labels to an issue or pull request of a granted repository.",
    input: inRepo({ number, labels: { ...strs("Labels to add."), minItems: 1 } }, ["number", "labels"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, write)
        const { data } = yield* call((signal) =>
          gh.rest.issues.addLabels({
            owner: r.owner,
            repo: r.repo,
            issue_number: input.int("number"),
            labels: [...input.strs("labels")],
            request: { signal }
          })
        )
        return { labels: data.map((l) => l.name) }
      })
  },
  {
    name: "codehost_remove_label",
    description: "Remove one label from an issue or pull request of a granted repository.",
    input: inRepo({ number, label: str("The label to remove.") }, ["number", "label"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const { r, gh } = yield* repoClient(scope, input, write)
        const { data } = yield* call((signal) =>
          gh.rest.issues.removeLabel({
            owner: r.owner,
            repo: r.repo,
            issue_number: input.int("number"),
            name: input.str("label"),
            request: { signal }
          })
        )
        return { labels: data.map((l) => l.name) }
      })
  }
]

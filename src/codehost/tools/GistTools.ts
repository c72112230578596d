/** Snippets (gists, spec 4.8 catalog): 7 tools acting as the installing person. Gist content is untrusted. */
import { Effect } from "effect"
import { call } from "../GitHubCall.ts"
import { bool, object, str, text, type Tool } from "../ToolKit.ts"

const gistId = str("The gist's id.")
const files = {
  type: "object",
  minProperties: 1,
  additionalProperties: { type: "string" },
  description: "File name to content."
}

const gistView = (
  g: {
    id: string
    description: string | null
    public: boolean
    html_url: string
    files: Record<string, { filename?: string; content?: string } | null>
  }
) => ({
  id: g.id,
  description: g.description,
  public: g.public,
  html_url: g.html_url,
  files: Object.fromEntries(Object.entries(g.files).map(([name, f]) => [name, f?.content ?? null]))
})

const filesOf = (raw: unknown): Record<string, { content: string }> =>
  Object.fromEntries(
    Object.entries(typeof raw === "object" && raw !== null ? raw : {}).map((
      [name, content]
    ) => [name, { content: String(content) }])
  )

export const gistTools: ReadonlyArray<Tool> = [
  {
    name: "codehost_list_gists",
    description: "List the installing person's gists.",
    input: object({}, []),
    untrusted: true,
    run: (scope) =>
      Effect.gen(function*() {
        const gh = yield* scope.person
        const { data } = yield* call((signal) => gh.rest.gists.list({ per_page: 30, request: { signal } }))
        return data.map((g) => ({
          id: g.id,
          description: g.description,
          public: g.public,
          files: Object.keys(g.files)
        }))
      })
  },
  {
    name: "codehost_get_gist",
    description: "Read a gist with its files' content.",
    input: object({ gistId }, ["gistId"]),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const gh = yield* scope.person
        const { data } = yield* call((signal) =>
          gh.rest.gists.get({ gist_id: input.str("gistId"), request: { signal } })
        )
        return gistView({
          id: data.id ?? "",
          description: data.description ?? null,
          public: data.public ?? false,
          html_url: data.html_url ?? "",
          files: data.files ?? {}
        })
      })
  },
  {
    name: "codehost_list_gist_comments",
    description: "List the comments of a gist.",
    input: object({ gistId }, ["gistId"]),
    untrusted: true,
    run: (scope, input) =>
      Effect.gen(function*() {
        const gh = yield* scope.person
        const { data } = yield* call((signal) =>
          gh.rest.gists.listComments({ gist_id: input.str("gistId"), request: { signal } })
        )
        return data.map((c) => ({ id: c.id, author: c.user?.login ?? null, body: c.body }))
      })
  },
  {
    name: "codehost_create_gist",
    description: "Create a gist as the installing person (secret unless public is true).",
    input: object({ files, description: text("Description."), public: bool("Public (default false).") }, ["files"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const gh = yield* scope.person
        const { data } = yield* call((signal) =>
          gh.rest.gists.create({
            files: filesOf(input.raw["files"]),
            description: input.optStr("description") ?? "",
            public: input.bool("public"),
            request: { signal }
          })
        )
        return { id: data.id, html_url: data.html_url }
      })
  },
  {
    name: "codehost_update_gist",
    description: "Change a gist's description, or replace or add files.",
    input: object({
      gistId,
      description: text("New description."),
      files: { type: "object", additionalProperties: { type: "string" }, description: "File name to its new content." }
    }, ["gistId"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const gh = yield* scope.person
        const description = input.optStr("description")
        const { data } = yield* call((signal) =>
          gh.rest.gists.update({
            gist_id: input.str("gistId"),
            files: filesOf(input.raw["files"]),
            ...(description === undefined ? {} : { description }),
            request: { signal }
          })
        )
        return { id: data.id, updated: true }
      })
  },
  {
    name: "codehost_delete_gist",
    description: "Delete a gist of the installing person.",
    input: object({ gistId }, ["gistId"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const gh = yield* scope.person
        yield* call((signal) => gh.rest.gists.delete({ gist_id: input.str("gistId"), request: { signal } }))
        return { id: input.str("gistId"), deleted: true }
      })
  },
  {
    name: "codehost_comment_gist",
    description: "Comment on a gist as the installing person.",
    input: object({ gistId, body: str("The comment.") }, ["gistId", "body"]),
    untrusted: false,
    run: (scope, input) =>
      Effect.gen(function*() {
        const gh = yield* scope.person
        const { data } = yield* call((signal) =>
          gh.rest.gists.createComment({ gist_id: input.str("gistId"), body: input.str("body"), request: { signal } })
        )
        return { id: data.id }
      })
  }
]

/** Snippets (gists, spec 4.8 catalog): 7 tools acting as the installing person. Gist content is untrusted. */
import { Effect, Schema } from "effect"
import { Flag, NonEmpty, optional, Strings, Text } from "../../tools/ToolInput.ts"
import { call } from "../GitHubCall.ts"
import { type CodehostTool, personTool } from "../ToolKit.ts"

const gistId = NonEmpty("The gist's id.")

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

const filesOf = (files: Readonly<Record<string, string>>): Record<string, { content: string }> =>
  Object.fromEntries(Object.entries(files).map(([name, content]) => [name, { content }]))

export const gistTools: ReadonlyArray<CodehostTool> = [
  personTool({
    name: "codehost_list_gists",
    description: "List the installing person's gists.",
    input: Schema.Struct({}),
    untrusted: true,
    run: (_, { gh }) =>
      Effect.map(
        call((signal) => gh.rest.gists.list({ per_page: 30, request: { signal } })),
        ({ data }) =>
          data.map((g) => ({ id: g.id, description: g.description, public: g.public, files: Object.keys(g.files) }))
      )
  }),
  personTool({
    name: "codehost_get_gist",
    description: "Read a gist with its files' content.",
    input: Schema.Struct({ gistId }),
    untrusted: true,
    run: ({ gistId }, { gh }) =>
      Effect.map(call((signal) => gh.rest.gists.get({ gist_id: gistId, request: { signal } })), ({ data }) =>
        gistView({
          id: data.id ?? "",
          description: data.description ?? null,
          public: data.public ?? false,
          html_url: data.html_url ?? "",
          files: data.files ?? {}
        }))
  }),
  personTool({
    name: "codehost_list_gist_comments",
    description: "List the comments of a gist.",
    input: Schema.Struct({ gistId }),
    untrusted: true,
    run: ({ gistId }, { gh }) =>
      Effect.map(
        call((signal) => gh.rest.gists.listComments({ gist_id: gistId, request: { signal } })),
        ({ data }) => data.map((c) => ({ id: c.id, author: c.user?.login ?? null, body: c.body }))
      )
  }),
  personTool({
    name: "codehost_create_gist",
    description: "Create a gist as the installing person (secret unless public is true).",
    input: Schema.Struct({
      files: Strings("File name to content.").check(Schema.isMinProperties(1)),
      description: optional(Text("Description.")),
      public: optional(Flag("Public (default false)."))
    }),
    run: (input, { gh }) =>
      Effect.map(
        call((signal) =>
          gh.rest.gists.create({
            files: filesOf(input.files),
            description: input.description ?? "",
            public: input.public === true,
            request: { signal }
          })
        ),
        ({ data }) => ({ id: data.id, html_url: data.html_url })
      )
  }),
  personTool({
    name: "codehost_update_gist",
    description: "Change a gist's description, or replace or add files.",
    input: Schema.Struct({
      gistId,
      description: optional(Text("New description.")),
      files: optional(Strings("File name to its new content."))
    }),
    run: ({ description, files = {}, gistId }, { gh }) =>
      Effect.map(
        call((signal) =>
          gh.rest.gists.update({
            gist_id: gistId,
            files: filesOf(files),
            ...(description === undefined ? {} : { description }),
            request: { signal }
          })
        ),
        ({ data }) => ({ id: data.id, updated: true })
      )
  }),
  personTool({
    name: "codehost_delete_gist",
    description: "Delete a gist of the installing person.",
    input: Schema.Struct({ gistId }),
    run: ({ gistId }, { gh }) =>
      Effect.as(call((signal) => gh.rest.gists.delete({ gist_id: gistId, request: { signal } })), {
        id: gistId,
        deleted: true
      })
  }),
  personTool({
    name: "codehost_comment_gist",
    description: "Comment on a gist as the installing person.",
    input: Schema.Struct({ gistId, body: NonEmpty("The comment.") }),
    run: ({ body, gistId }, { gh }) =>
      Effect.map(
        call((signal) => gh.rest.gists.createComment({ gist_id: gistId, body, request: { signal } })),
        ({ data }) => ({ id: data.id })
      )
  })
]

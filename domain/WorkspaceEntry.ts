/**
 * The files of a thread's managed workspace as the API lists them
 * (`GET /v1/threads/:id/workspace/files`, a design the spec does not show:
 * docs/reference/not-shown.md): one directory at a time, a page of entries
 * sorted by name. A page's cursor is the last name it listed (base64url),
 * opaque to clients.
 */
import { Option, Result, Schema } from "effect"
import { Base64Url } from "effect/encoding"
import { PageQuery } from "./Page.ts"

export const WorkspaceEntry = Schema.Struct({
  name: Schema.String,
  /** Relative to the workspace root, `/`-separated (what `path` takes to open it). */
  path: Schema.String,
  /** A symbolic link is listed, never followed; `other`: a FIFO or socket. */
  type: Schema.Literals(["file", "directory", "symlink", "other"]),
  /** Bytes (of a link: its target's length). */
  size: Schema.Number,
  modifiedAt: Schema.String
}).annotate({ identifier: "WorkspaceEntry" })
export type WorkspaceEntry = typeof WorkspaceEntry.Type

/** The name a cursor holds, if it is one this API wrote. */
export const cursorName = (cursor: string): Option.Option<string> =>
  Option.filter(Result.getSuccess(Base64Url.decodeString(cursor)), (name) => name.length > 0 && !name.includes("/"))

export const nameCursor = (name: string): string => Base64Url.encode(name)

const maxPathLength = 4_096

/** A path in the workspace: relative to its root (`""` or absent: the root). */
export const WorkspacePathParam = Schema.String.check(
  Schema.isMaxLength(maxPathLength, { message: `path is at most ${maxPathLength} characters` })
).annotate({ description: "Relative to the workspace root, `/`-separated; absent or empty: the root." })

export const WorkspaceFilesQuery = {
  path: Schema.optionalKey(WorkspacePathParam),
  limit: PageQuery.limit,
  cursor: Schema.optionalKey(
    Schema.String.check(
      Schema.makeFilter((cursor: string) => Option.isSome(cursorName(cursor)), {
        message: "cursor is not a cursor this API returned"
      })
    )
  )
}

export const WorkspaceFileQuery = { path: WorkspacePathParam }

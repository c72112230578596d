/**
 * A thread's managed workspace, browsed through the API (a design the spec
 * does not show: docs/reference/not-shown.md): one directory's entries a
 * page at a time, and one file's bytes. The files are read from this node's
 * copy of the workspace without starting its sandbox (WorkspaceReader: no
 * symbolic link is ever followed); a workspace whose files are only in its
 * snapshot, or on another node, is 409 `workspace_unavailable` until a run
 * opens it here again.
 */
import { type Cause, Context, Effect, Layer, Option, type Stream } from "effect"
import { Conflict, InvalidRequest, NotFound, type PermissionDenied } from "../../domain/Errors.ts"
import type { ThreadId } from "../../domain/Ids.ts"
import { PageLimits, type PageOf } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { cursorName, nameCursor, type WorkspaceEntry } from "../../domain/WorkspaceEntry.ts"
import { mediaTypeOf } from "../artifacts/MediaTypes.ts"
import { WorkspaceLifecycle } from "../workspace/WorkspaceLifecycle.ts"
import * as WorkspacePath from "../workspace/WorkspacePath.ts"
import * as WorkspaceReader from "../workspace/WorkspaceReader.ts"
import { Threads } from "./Threads.ts"

export interface WorkspaceFile {
  readonly filename: string
  readonly mediaType: string
  readonly size: number
  /** The bytes, read when the stream runs (a file gone by then ends it with an error). */
  readonly body: Stream.Stream<Uint8Array, WorkspaceReader.ReadRefused | Cause.UnknownError>
}

type Failure = NotFound | PermissionDenied | Conflict | InvalidRequest

export class WorkspaceBrowser extends Context.Service<WorkspaceBrowser, {
  readonly list: (
    principal: Principal,
    threadId: ThreadId,
    query: { readonly path?: string; readonly limit?: number; readonly cursor?: string }
  ) => Effect.Effect<PageOf<WorkspaceEntry>, Failure>
  /** The file's name, media type, size and bytes. */
  readonly open: (principal: Principal, threadId: ThreadId, path: string) => Effect.Effect<WorkspaceFile, Failure>
}>()("svc/WorkspaceBrowser") {
  static readonly layer = Layer.effect(WorkspaceBrowser)(Effect.gen(function*() {
    const threads = yield* Threads
    const lifecycle = yield* WorkspaceLifecycle

    const unavailable = (reason: "none" | "elsewhere", message: string) =>
      new Conflict({ code: "workspace_unavailable", message, details: { reason } })

    /** The path's components (lexically checked), and where the workspace's files are on this node. */
    const locate = (principal: Principal, threadId: ThreadId, path: string) =>
      Effect.gen(function*() {
        const row = yield* threads.getRow(principal, threadId)
        if (row.thread.workspace === null || row.workspaceSpec === null) {
          return yield* unavailable(
            "none",
            `Thread '${threadId}' has no managed workspace: there are no files to show.`
          )
        }
        const resolved = WorkspacePath.resolve(path)
        if ("error" in resolved) return yield* InvalidRequest.forQuery("path", `path: ${resolved.error}`)
        const components = resolved.relative === "." ? [] : resolved.relative.split("/")
        const copy = yield* lifecycle.localCopy(threadId)
        if (copy._tag === "Elsewhere") {
          return yield* unavailable(
            "elsewhere",
            `The files of the workspace of thread '${threadId}' (${row.thread.workspace.status}) are in its snapshot, not on ` +
              "this node; they are readable again once a run opens the workspace."
          )
        }
        return { components, relative: resolved.relative, dir: copy._tag === "Local" ? copy.dir : undefined }
      })

    const refused = (path: string) => (e: WorkspaceReader.ReadRefused) => {
      const at = e.at === "." ? "the workspace root" : `'${e.at}'`
      switch (e.reason) {
        case "not_found":
          return new NotFound({ code: "file_not_found", message: `No file or directory '${path}' in the workspace.` })
        case "symlink":
          return InvalidRequest.forQuery("path", `path: ${at} is a symbolic link; links are listed, never followed.`)
        case "not_directory":
          return InvalidRequest.forQuery("path", `path: ${at} is not a directory.`)
        case "not_file":
          return InvalidRequest.forQuery("path", `path: '${path}' is a directory; list it instead.`)
        case "unreadable":
          return InvalidRequest.forQuery("path", `path: '${path}' is not a regular file that can be read.`)
      }
    }

    const list = Effect.fn("WorkspaceBrowser.list")(function*(
      principal: Principal,
      threadId: ThreadId,
      query: { readonly path?: string; readonly limit?: number; readonly cursor?: string }
    ) {
      const path = query.path ?? ""
      const { components, relative, dir } = yield* locate(principal, threadId, path)
      const limit = query.limit ?? PageLimits.default
      // No files anywhere yet (never opened): an empty root.
      if (dir === undefined && components.length > 0) yield* Effect.fail(refused(path)(notFound))
      const after = query.cursor === undefined ? undefined : Option.getOrUndefined(cursorName(query.cursor))
      const page = dir === undefined
        ? { entries: [], hasMore: false }
        : yield* WorkspaceReader.list(dir, components, { after, limit }).pipe(Effect.mapError(refused(path)))
      const data = page.entries.map((e): WorkspaceEntry => ({
        ...e,
        path: relative === "." ? e.name : `${relative}/${e.name}`
      }))
      const hasMore = page.hasMore
      const last = data.at(-1)
      return {
        object: "list",
        data,
        hasMore,
        nextCursor: hasMore && last !== undefined ? nameCursor(last.name) : null,
        limit
      } satisfies PageOf<WorkspaceEntry>
    })

    const open = Effect.fn("WorkspaceBrowser.open")(function*(principal: Principal, threadId: ThreadId, path: string) {
      const { components, dir } = yield* locate(principal, threadId, path)
      if (dir === undefined || components.length === 0) {
        return yield* Effect.fail(refused(path)(components.length === 0 ? notAFile : notFound))
      }
      const file = yield* WorkspaceReader.inspect(dir, components).pipe(Effect.mapError(refused(path)))
      const filename = components.at(-1) ?? "file"
      return {
        filename,
        mediaType: mediaTypeOf(filename, file.head),
        size: file.size,
        body: WorkspaceReader.read(dir, components, file.size)
      } satisfies WorkspaceFile
    })

    return { list, open }
  }))
}

const notFound = new WorkspaceReader.ReadRefused({ reason: "not_found", at: "." })
const notAFile = new WorkspaceReader.ReadRefused({ reason: "not_file", at: "." })

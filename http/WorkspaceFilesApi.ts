/**
 * Contract of a thread's workspace files (issue 27; a design the spec does
 * not show, docs/reference/not-shown.md): the entries of one directory of the
 * thread's managed workspace, and one file's bytes, served as downloads are
 * (http/BytesResponse.ts).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ClientId } from "../domain/Ids.ts"
import { Page } from "../domain/Page.ts"
import { WorkspaceEntry, WorkspaceFileQuery, WorkspaceFilesQuery } from "../domain/WorkspaceEntry.ts"
import { doc } from "./ApiDocs.ts"
import { ApiConflict, ApiForbidden, ApiNotFound } from "./ErrorEnvelope.ts"
import { Bytes } from "./FilesApi.ts"

const params = { id: ClientId.thread }

const refusals =
  "A path outside the workspace (absolute, or `..` climbing out), through a symbolic link or of the wrong kind is 400 " +
  "naming `path`; a missing one 404 `file_not_found`. A thread without a managed workspace is 409 " +
  "`workspace_unavailable` with `details.reason: \"none\"`; one whose files are only in its snapshot or on another " +
  "node (hibernated, or moved) the same with `\"elsewhere\"`, until a run opens the workspace again."

export const WorkspaceFilesApi = HttpApiGroup.make("workspaceFiles")
  .add(
    HttpApiEndpoint.get("list", "/v1/threads/:id/workspace/files", {
      params,
      query: WorkspaceFilesQuery,
      success: Page(WorkspaceEntry),
      error: [ApiForbidden, ApiNotFound, ApiConflict]
    }).annotateMerge(
      doc(
        "List a thread's workspace files",
        "The entries of one directory of the thread's managed workspace (`path`, relative to its root; absent: the root), " +
          "sorted by name, a page at a time: `{ name, path, type, size, modifiedAt }`, `type` one of `file`, `directory`, " +
          "`symlink` (listed, never followed) or `other`. Read from the workspace's files as they are on disk, without " +
          "starting its sandbox; a workspace not yet opened lists an empty root. " + refusals
      )
    )
  )
  .add(
    HttpApiEndpoint.get("content", "/v1/threads/:id/workspace/files/content", {
      params,
      query: WorkspaceFileQuery,
      success: Bytes,
      error: [ApiForbidden, ApiNotFound, ApiConflict]
    }).annotateMerge(
      doc(
        "Download a workspace file",
        "The bytes of one regular file of the thread's managed workspace, as a download (its media type from its name or " +
          "its first bytes, `Content-Disposition: attachment`, a sandboxing Content-Security-Policy). " + refusals
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Workspace files: what a thread's managed workspace holds, browsed a directory at a time, and downloaded."
  )

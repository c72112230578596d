/**
 * A run's attachments (spec 4.3 rule 1), resolved when it starts: each
 * `{ fileId }` must name a file of the caller's workspace that can reach the
 * model (AttachmentRules); then each becomes a run-scoped artifact, listed to
 * the agent in the manifest and, with a managed workspace, given a path there.
 * Any bad item refuses the whole run with a 400 naming it (a file of another
 * workspace too: the run is refused, nothing is read).
 */
import { Effect } from "effect"
import type { AttachmentRef } from "../../domain/Conversation.ts"
import { InvalidRequest } from "../../domain/Errors.ts"
import { FileId, type RunId, type ThreadId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { Files } from "../artifacts/Files.ts"
import { AttachmentLimits, placementOf, workspacePaths } from "./AttachmentRules.ts"

type FilesService = Files["Service"]

const itemField = (i: number) => `input.attachments[${i}].fileId`

/** An item naming no file of this workspace, as a 400 naming the item (catchTags handlers). */
const unusable = (i: number, fileId: string) => ({
  NotFound: () =>
    Effect.fail(
      InvalidRequest.forField(itemField(i), `input.attachments[${i}]: no file '${fileId}' exists.`, "file_not_found")
    ),
  PermissionDenied: () =>
    Effect.fail(
      InvalidRequest.forField(
        itemField(i),
        `input.attachments[${i}]: the file '${fileId}' belongs to another workspace.`
      )
    )
})

export const resolve = Effect.fn("Attachments.resolve")(function*(
  files: FilesService,
  principal: Principal,
  items: ReadonlyArray<{ readonly fileId: string }>,
  scope: { readonly runId: RunId; readonly threadId: ThreadId; readonly hasWorkspace: boolean }
) {
  if (items.length > AttachmentLimits.maxItems) {
    return yield* InvalidRequest.forField(
      "input.attachments",
      `At most ${AttachmentLimits.maxItems} files can be attached to one input; got ${items.length}.`
    )
  }
  const described = yield* Effect.forEach(items, ({ fileId }, i) =>
    files.describe(principal, FileId.make(fileId)).pipe(
      Effect.catchTags(unusable(i, fileId)),
      Effect.flatMap((file) => {
        const placement = placementOf(file.mediaType, file.bytes, scope.hasWorkspace)
        return "refused" in placement
          ? Effect.fail(
            InvalidRequest.forField(
              itemField(i),
              `input.attachments[${i}]: the file '${fileId}' (${file.filename}) cannot be attached: ${placement.refused}.`
            )
          )
          : Effect.succeed({ fileId, file, as: placement.as })
      })
    ))
  const inline = described.reduce((sum, d) => sum + (d.as === "workspace" ? 0 : d.file.bytes), 0)
  if (inline > AttachmentLimits.inlineTotalBytes) {
    return yield* InvalidRequest.forField(
      "input.attachments",
      `The attached files sent to the model come to ${inline} bytes, over the ${AttachmentLimits.inlineTotalBytes}-byte limit of one input.`
    )
  }
  const paths = scope.hasWorkspace ? workspacePaths(described.map((d) => d.file.filename)) : []
  return yield* Effect.forEach(
    described,
    ({ fileId, as }, i) =>
      // The run's copy counts towards the workspace's storage quota: 413 storage_quota_exceeded naming the item.
      files.toArtifact(principal, FileId.make(fileId), {
        runId: scope.runId,
        threadId: scope.threadId,
        item: itemField(i)
      }).pipe(
        Effect.catchTags(unusable(i, fileId)),
        Effect.map((artifact): AttachmentRef => ({
          artifactId: artifact.id,
          filename: artifact.filename,
          mediaType: artifact.mediaType,
          bytes: artifact.bytes,
          sha256: artifact.sha256,
          as,
          ...(paths[i] === undefined ? {} : { path: paths[i] })
        }))
      )
  )
})

/**
 * A run's attachments at execution: the bytes the model is sent (images,
 * documents and text of every user message in the conversation, the thread's
 * earlier turns included, and the view_media images sent inline,
 * src/model/ToolMedia.ts), and the files placed in the managed workspace
 * when the run first executes.
 */
import { Effect } from "effect"
import type { AttachmentRef, Message } from "../../domain/Conversation.ts"
import { ArtifactId } from "../../domain/Ids.ts"
import type { Artifacts } from "../artifacts/Artifacts.ts"
import { inlineMedia } from "../model/ToolMedia.ts"
import type { FileAccess } from "../tools/ToolFamily.ts"

type ArtifactsService = Artifacts["Service"]

/**
 * The bytes of an artifact; absent when retention purged it (the model is told so). A store
 * that fails or is gone is an engine fault: the run must not go on as if the file never was.
 */
const bytesOf = (artifacts: ArtifactsService, id: string) =>
  artifacts.read(ArtifactId.make(id)).pipe(
    Effect.map((data): Uint8Array | undefined => data),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined)),
    Effect.orDie
  )

/** The ids of the bytes a step of `messages` sends: attachments shown inline and the inline view_media images. */
const idsOf = (messages: ReadonlyArray<Message>): ReadonlySet<string> =>
  new Set([
    ...messages.flatMap((m) => (m.role === "user" ? m.attachments ?? [] : [])).filter((a) => a.as !== "workspace").map((
      a
    ) => a.artifactId),
    ...inlineMedia(messages)
  ])

/**
 * The bytes each step of one execution sends, read once: a step reads only what it needs that
 * an earlier step did not (a view_media image of the step before); what no longer goes is dropped.
 */
export const loader = (artifacts: ArtifactsService) => {
  const cache = new Map<string, Uint8Array | undefined>()
  return (messages: ReadonlyArray<Message>): Effect.Effect<ReadonlyMap<string, Uint8Array>> =>
    Effect.gen(function*() {
      const ids = idsOf(messages)
      for (const id of cache.keys()) if (!ids.has(id)) cache.delete(id)
      const files = new Map<string, Uint8Array>()
      for (const id of ids) {
        if (!cache.has(id)) cache.set(id, yield* bytesOf(artifacts, id))
        const data = cache.get(id)
        if (data !== undefined) files.set(id, data)
      }
      return files
    })
}

/** Writes each attachment with a workspace path there; one that cannot be written is reported, and the run goes on. */
export const place = Effect.fn("AttachmentFiles.place")(function*(
  artifacts: ArtifactsService,
  files: FileAccess,
  attachments: ReadonlyArray<AttachmentRef>,
  report: (message: string) => Effect.Effect<void>
) {
  for (const a of attachments) {
    if (a.path === undefined) continue
    const path = a.path
    const data = yield* bytesOf(artifacts, a.artifactId)
    if (data === undefined) {
      yield* report(`The attachment ${a.filename} is no longer stored; it was not placed in the workspace.`)
      continue
    }
    yield* files.write(path, data).pipe(
      Effect.catch((e) =>
        report(`The attachment ${a.filename} could not be placed in the workspace at ${path}: ${e.message}`)
      )
    )
  }
})

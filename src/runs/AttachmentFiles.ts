/**
 * A run's attachments at execution: the bytes the model is sent (images,
 * documents and text of every user message in the conversation, the thread's
 * earlier turns included), and the files placed in the managed workspace
 * when the run first executes.
 */
import { Effect } from "effect"
import type { AttachmentRef, Message } from "../../domain/Conversation.ts"
import { ArtifactId } from "../../domain/Ids.ts"
import type { Artifacts } from "../artifacts/Artifacts.ts"
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

/** The bytes the model is sent, by artifact id. */
export const load = Effect.fn("AttachmentFiles.load")(
  function*(artifacts: ArtifactsService, messages: ReadonlyArray<Message>) {
    const ids = new Set(
      messages.flatMap((m) => (m.role === "user" ? m.attachments ?? [] : [])).filter((a) => a.as !== "workspace").map((
        a
      ) => a.artifactId)
    )
    const files = new Map<string, Uint8Array>()
    for (const id of ids) {
      const data = yield* bytesOf(artifacts, id)
      if (data !== undefined) files.set(id, data)
    }
    return files
  }
)

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

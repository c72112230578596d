/**
 * Which images of view_media results (`ToolMessage.media`) a model step sends
 * as the provider's native image parts: those of the latest `inlineViews`
 * views of the current turn (after its last user message). An older view, or
 * one of an earlier turn, is named instead (its artifact ids and how to look
 * again), so a long run or thread does not send every image it ever looked at
 * on every step; `view_media` with one of those ids shows it again.
 */
import type { AttachmentRef, Message, ToolMessage } from "../../domain/Conversation.ts"

/** The views of a turn whose images are sent on each of its steps. */
export const inlineViews = 3

/** The artifact ids of the images sent inline for `messages`. */
export const inlineMedia = (messages: ReadonlyArray<Message>): ReadonlySet<string> => {
  let lastUser = -1
  messages.forEach((m, i) => {
    if (m.role === "user") lastUser = i
  })
  const views = messages.slice(lastUser + 1).filter((m): m is ToolMessage & { media: ReadonlyArray<AttachmentRef> } =>
    m.role === "tool" && m.media !== undefined && m.media.length > 0
  )
  return new Set(views.slice(-inlineViews).flatMap((m) => m.media.map((a) => a.artifactId)))
}

/** What the model reads, after the result's own text, of a view whose images are not sent again. */
export const notShownAgain = (media: ReadonlyArray<AttachmentRef>): string =>
  `[The ${media.length === 1 ? "image" : `${media.length} images`} of this result ${
    media.length === 1 ? "is" : "are"
  } not sent again (${
    media.map((a) => a.artifactId).join(", ")
  }); call view_media with one of these ids as its source to look again.]`

/** A tool message's media split into what is sent (with its bytes) and what is only named. */
export const toolImages = (
  message: ToolMessage,
  inline: ReadonlySet<string>,
  files: ReadonlyMap<string, Uint8Array> | undefined
): {
  readonly shown: ReadonlyArray<{ readonly ref: AttachmentRef; readonly bytes: Uint8Array }>
  readonly text: string
} => {
  const media = message.media ?? []
  const shown = media.flatMap((ref) => {
    const bytes = inline.has(ref.artifactId) ? files?.get(ref.artifactId) : undefined
    return bytes === undefined ? [] : [{ ref, bytes }]
  })
  const named = media.filter((ref) => !shown.some((s) => s.ref.artifactId === ref.artifactId))
  return { shown, text: named.length === 0 ? message.content : `${message.content}\n${notShownAgain(named)}` }
}

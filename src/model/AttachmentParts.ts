/**
 * How a user message's attachments reach a model (spec 4.3 rule 1): every
 * provider gets the same manifest (name, media type, size, the `svc` handle
 * and, with a managed workspace, the file's path), then each file by its
 * `as`: images and PDFs as the provider's native parts, text files as text,
 * workspace-only files by the manifest line alone. `mediaFidelity: 'spatial'`
 * asks OpenAI-compatible routes for full resolution (`detail: "high"`);
 * Anthropic's image blocks have no such field (docs/guide/media-view.md#fidelity).
 */
import type { AttachmentRef } from "../../domain/Conversation.ts"
import type { ModelRequest } from "./ModelProvider.ts"

type Files = ReadonlyMap<string, Uint8Array> | undefined
type Part = Readonly<Record<string, unknown>>
type Fidelity = ModelRequest["mediaFidelity"]

const base64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/** An OpenAI-compatible image part: `detail: "high"` at spatial fidelity, the provider's default (`auto`) otherwise. */
export const openAiImage = (mediaType: string, bytes: Uint8Array, fidelity: Fidelity): Part => ({
  type: "image_url",
  image_url: {
    url: `data:${mediaType};base64,${base64(bytes)}`,
    ...(fidelity === "spatial" ? { detail: "high" } : {})
  }
})

/** An Anthropic image block (base64 source); the same at both fidelities. */
export const anthropicImage = (mediaType: string, bytes: Uint8Array): Part => ({
  type: "image",
  source: { type: "base64", media_type: mediaType, data: base64(bytes) }
})

/** The manifest the model reads before the files themselves. */
export const manifest = (attachments: ReadonlyArray<AttachmentRef>): string =>
  [
    "<attachments>",
    ...attachments.map((a) =>
      `- ${JSON.stringify(a.filename)} (${a.mediaType}, ${a.bytes} bytes) handle ${
        JSON.stringify({ kind: "svc", id: a.artifactId })
      }` +
      (a.path === undefined ? "" : `; in the workspace at ${a.path}`) +
      (a.as === "workspace" ? "; not shown inline: read it in the workspace" : "")
    ),
    "</attachments>"
  ].join("\n")

const textFile = (a: AttachmentRef, bytes: Uint8Array) =>
  `<file name=${JSON.stringify(a.filename)} media_type=${JSON.stringify(a.mediaType)}>\n${
    new TextDecoder().decode(bytes)
  }\n</file>`

const missing = (a: AttachmentRef) =>
  `[The attachment ${
    JSON.stringify(a.filename)
  } (${a.artifactId}) is no longer stored; only its manifest line remains.]`

/** Each attachment as a provider part, through `native` for images and documents. */
const parts = (
  attachments: ReadonlyArray<AttachmentRef>,
  files: Files,
  text: (t: string) => Part,
  native: (a: AttachmentRef, bytes: Uint8Array) => Part
): Array<Part> =>
  attachments.flatMap((a) => {
    if (a.as === "workspace") return []
    const bytes = files?.get(a.artifactId)
    if (bytes === undefined) return [text(missing(a))]
    return [a.as === "text" ? text(textFile(a, bytes)) : native(a, bytes)]
  })

/** OpenAI-compatible Chat Completions: `image_url` data URLs and `file` parts for PDFs. */
export const openAiUserContent = (
  content: string,
  attachments: ReadonlyArray<AttachmentRef> | undefined,
  files: Files,
  fidelity?: Fidelity
) => {
  if (attachments === undefined || attachments.length === 0) return content
  const text = (t: string): Part => ({ type: "text", text: t })
  return [
    ...(content === "" ? [] : [text(content)]),
    text(manifest(attachments)),
    ...parts(attachments, files, text, (a, bytes) =>
      a.as === "image"
        ? openAiImage(a.mediaType, bytes, fidelity)
        : { type: "file", file: { filename: a.filename, file_data: `data:${a.mediaType};base64,${base64(bytes)}` } })
  ]
}

/** Anthropic Messages: `image` and `document` blocks with base64 sources, ahead of the text as Anthropic advises. */
export const anthropicUserBlocks = (
  content: string,
  attachments: ReadonlyArray<AttachmentRef> | undefined,
  files: Files
): Array<Part> => {
  const text = (t: string): Part => ({ type: "text", text: t })
  if (attachments === undefined || attachments.length === 0) return content === "" ? [] : [text(content)]
  return [
    ...parts(attachments, files, text, (a, bytes) =>
      a.as === "image" ? anthropicImage(a.mediaType, bytes) : {
        type: "document",
        source: { type: "base64", media_type: a.mediaType, data: base64(bytes) },
        title: a.filename
      }),
    text(manifest(attachments)),
    ...(content === "" ? [] : [text(content)])
  ]
}

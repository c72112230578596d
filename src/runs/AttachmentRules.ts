/**
 * How an attached file reaches the model (spec 4.3 rule 1), decided when the
 * run starts: images and PDFs as the provider's native parts, UTF-8 text
 * inline as text, anything else (or anything over its inline limit) only in
 * the managed workspace, read there with the file tools. Without a workspace
 * such a file is refused, naming the item.
 */
import type { AttachmentRef } from "../../domain/Conversation.ts"

export const AttachmentLimits = {
  /** Items in one input. */
  maxItems: 20,
  /** An image sent inline (Anthropic's per-image ceiling, below OpenAI's). */
  imageBytes: 5 * 1024 * 1024,
  /** A PDF sent inline (Anthropic's per-request document ceiling). */
  documentBytes: 32 * 1024 * 1024,
  /** A text file sent inline. */
  textBytes: 256 * 1024,
  /** Everything one input sends inline together. */
  inlineTotalBytes: 32 * 1024 * 1024
} as const

const images = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"])
const textTypes = new Set([
  "application/json",
  "application/xml",
  "application/x-yaml",
  "application/yaml",
  "application/javascript",
  "application/x-ndjson"
])

/** The base media type, without parameters, lower case. */
export const essence = (mediaType: string): string => (mediaType.split(";")[0] ?? "").trim().toLowerCase()

const isText = (type: string) =>
  type.startsWith("text/") || textTypes.has(type) || type.endsWith("+json") || type.endsWith("+xml")

export type Placement =
  | { readonly as: AttachmentRef["as"] }
  | { readonly refused: string }

/** Where a file of `mediaType` and `bytes` goes, given whether the run has a managed workspace. */
export const placementOf = (mediaType: string, bytes: number, hasWorkspace: boolean): Placement => {
  const type = essence(mediaType)
  const inline = images.has(type)
    ? { as: "image" as const, limit: AttachmentLimits.imageBytes, what: "an image" }
    : type === "application/pdf"
    ? { as: "document" as const, limit: AttachmentLimits.documentBytes, what: "a PDF" }
    : isText(type)
    ? { as: "text" as const, limit: AttachmentLimits.textBytes, what: "a text file" }
    : undefined
  if (inline !== undefined && bytes <= inline.limit) return { as: inline.as }
  if (hasWorkspace) return { as: "workspace" }
  return inline === undefined
    ? {
      refused:
        `its media type ${type} cannot be shown to the model (images png/jpeg/gif/webp, PDF and text files can); ` +
        "an agent with a managed workspace receives any file there"
    }
    : {
      refused:
        `it is ${bytes} bytes, over the ${inline.limit}-byte limit for ${inline.what} sent to the model; an agent with a managed workspace receives it there`
    }
}

/** Where attachments land in a managed workspace, relative to its root. */
export const attachmentsDir = "attachments"

/** A file name safe as one path segment: no separators, no control characters, no leading dot. */
const safeName = (filename: string): string => {
  const base = filename.split(/[\\/]/).at(-1) ?? ""
  const cleaned = base.replace(/[\u0000-\u001f\u007f]/g, "_").replace(/^\.+/, "").trim()
  return cleaned === "" ? "file" : cleaned.slice(0, 200)
}

/** Workspace paths for these file names, distinct within the input (`name (2).ext` for a repeat). */
export const workspacePaths = (filenames: ReadonlyArray<string>): Array<string> => {
  const taken = new Set<string>()
  return filenames.map((filename) => {
    const name = safeName(filename)
    const dot = name.lastIndexOf(".")
    const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""]
    let candidate = name
    for (let n = 2; taken.has(candidate); n++) candidate = `${stem} (${n})${ext}`
    taken.add(candidate)
    return `${attachmentsDir}/${candidate}`
  })
}

/**
 * Where view_media's `source` points and the bytes there: an `https://` URL
 * (through the guarded client's untrusted mode, as web_fetch: link-local and
 * metadata addresses refused whatever the settings, every redirect
 * re-checked), a file id (`file_...`) or an artifact id (`art_...`) of the
 * run's workspace, or else a path in the agent's managed workspace. Each read
 * is bounded by `viewLimits.sourceMaxBytes`. The media type is the one the
 * source declares (a URL's Content-Type, the stored type) or, when it says
 * nothing useful, the file name's extension, then the bytes' signature.
 */
import { Effect } from "effect"
import { ArtifactId, FileId } from "../../../domain/Ids.ts"
import type { Principal } from "../../../domain/Principal.ts"
import type { Artifacts } from "../../artifacts/Artifacts.ts"
import type { Files } from "../../artifacts/Files.ts"
import { mediaTypeOf } from "../../artifacts/MediaTypes.ts"
import type { GuardedFetch } from "../../outbound/Outbound.ts"
import type { FileAccess } from "../../tools/ToolFamily.ts"
import { request } from "../../web/WebRequest.ts"
import { MediaFailed } from "./MediaProcess.ts"
import { viewLimits } from "./ViewLimits.ts"

export interface SourceAccess {
  readonly principal: Principal
  readonly fetchUntrusted: GuardedFetch
  readonly artifacts: Artifacts["Service"]
  readonly files: Files["Service"]
  /** The managed workspace's files; absent without one. */
  readonly workspace: FileAccess | undefined
}

export interface Resolved {
  readonly origin: "url" | "file" | "artifact" | "workspace"
  readonly filename: string
  readonly mediaType: string
  readonly bytes: Uint8Array
  /** Set when the source is an artifact already (not stored again). */
  readonly artifactId?: ArtifactId
}

/** Video and audio types the export table does not know. */
const moreTypes: Readonly<Record<string, string>> = {
  mov: "video/quicktime",
  m4v: "video/mp4",
  mkv: "video/x-matroska",
  avi: "video/x-msvideo",
  m4a: "audio/mp4",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  opus: "audio/ogg",
  flac: "audio/flac",
  aac: "audio/aac"
}

const bare = (type: string) => type.split(";")[0].trim().toLowerCase()

/** The declared type unless it says nothing, else by name and bytes. */
export const typeOf = (declared: string, filename: string, bytes: Uint8Array): string => {
  const type = bare(declared)
  if (type !== "" && type !== "application/octet-stream") return type
  const extension = filename.slice(filename.lastIndexOf(".") + 1).toLowerCase()
  return moreTypes[extension] ?? bare(mediaTypeOf(filename, bytes))
}

const tooLarge = (what: string, bytes?: number) =>
  new MediaFailed({
    code: "media_too_large",
    message: `${what} is ${
      bytes === undefined ? "larger than that" : `${bytes} bytes`
    }; view_media reads up to ${viewLimits.sourceMaxBytes} bytes.`
  })

/** A missing or foreign file or artifact is not found; a store that failed says so. */
const unreadable = (what: string) => (e: { readonly _tag: string; readonly message: string }) =>
  e._tag === "NotFound" || e._tag === "PermissionDenied"
    ? new MediaFailed({ code: "media_source_not_found", message: `${what} was not found in this workspace.` })
    : new MediaFailed({ code: "media_source_unavailable", message: `${what} could not be read: ${e.message}` })

/** A URL path segment as a file name (a malformed escape stays as it is). */
const decoded = (segment: string): string => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

const fromUrl = (access: SourceAccess, url: string) =>
  Effect.gen(function*() {
    const response = yield* request(access.fetchUntrusted, url, {}, viewLimits.sourceMaxBytes).pipe(
      Effect.mapError((e) =>
        e.code === "response_too_large" ? tooLarge(url) : new MediaFailed({ code: e.code, message: e.message })
      )
    )
    if (response.status >= 400) {
      return yield* new MediaFailed({
        code: "http_error",
        message: `${response.url} answered HTTP ${response.status}.`
      })
    }
    const last = new URL(response.url).pathname.split("/").at(-1) ?? ""
    const filename = decoded(last) || "media"
    const resolved: Resolved = {
      origin: "url",
      filename,
      mediaType: typeOf(response.contentType, filename, response.bytes),
      bytes: response.bytes
    }
    return resolved
  })

const fromFile = (access: SourceAccess, id: string) =>
  Effect.gen(function*() {
    const what = `The file ${id}`
    const described = yield* access.files.describe(access.principal, FileId.make(id)).pipe(
      Effect.mapError(unreadable(what))
    )
    if (described.bytes > viewLimits.sourceMaxBytes) return yield* tooLarge(what, described.bytes)
    const { data, file } = yield* access.files.content(access.principal, FileId.make(id)).pipe(
      Effect.mapError(unreadable(what))
    )
    const resolved: Resolved = {
      origin: "file",
      filename: file.filename,
      mediaType: typeOf(file.mediaType, file.filename, data),
      bytes: data
    }
    return resolved
  })

const fromArtifact = (access: SourceAccess, id: string) =>
  Effect.gen(function*() {
    const what = `The artifact ${id}`
    const record = yield* access.artifacts.get(access.principal, ArtifactId.make(id)).pipe(
      Effect.mapError(unreadable(what))
    )
    if (record.bytes > viewLimits.sourceMaxBytes) return yield* tooLarge(what, record.bytes)
    const bytes = yield* access.artifacts.content(record).pipe(Effect.mapError(unreadable(what)))
    const resolved: Resolved = {
      origin: "artifact",
      filename: record.filename,
      mediaType: typeOf(record.mediaType, record.filename, bytes),
      bytes,
      artifactId: record.id
    }
    return resolved
  })

const fromWorkspace = (access: SourceAccess, path: string) =>
  Effect.gen(function*() {
    if (access.workspace === undefined) {
      return yield* new MediaFailed({
        code: "media_source_not_found",
        message:
          `'${path}' is not an https URL, a file id (file_...) or an artifact id (art_...), and this agent has no workspace to read it from.`
      })
    }
    const file = yield* access.workspace.read(path, viewLimits.sourceMaxBytes).pipe(
      Effect.mapError((e) => new MediaFailed({ code: "workspace_error", message: e.message }))
    )
    const filename = file.path.split("/").at(-1) ?? file.path
    const resolved: Resolved = {
      origin: "workspace",
      filename,
      mediaType: typeOf("", filename, file.bytes),
      bytes: file.bytes
    }
    return resolved
  })

/** The bytes `source` names. */
export const resolve = (access: SourceAccess, source: string): Effect.Effect<Resolved, MediaFailed> => {
  const trimmed = source.trim()
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) return fromUrl(access, trimmed)
  if (/^file_[A-Za-z0-9]+$/.test(trimmed)) return fromFile(access, trimmed)
  if (/^art_[A-Za-z0-9]+$/.test(trimmed)) return fromArtifact(access, trimmed)
  return fromWorkspace(access, trimmed)
}

/**
 * The image a media tool starts from (`edit_image`'s `source` and `mask`,
 * `generate_video`'s `source`): an uploaded file (`file_...`) or an artifact
 * (`art_...`) of the run's workspace, or a path in its managed workspace.
 * What cannot be read is `media_source_unavailable`, naming it.
 */
import { Effect } from "effect"
import { ArtifactId, FileId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { Artifacts } from "../artifacts/Artifacts.ts"
import type { Files } from "../artifacts/Files.ts"
import { mediaTypeOf } from "../artifacts/MediaTypes.ts"
import type { FileAccess } from "../tools/ToolFamily.ts"
import { GenerationFailed } from "./MediaHttp.ts"

export interface Source {
  readonly bytes: Uint8Array
  readonly mediaType: string
  readonly filename: string
}

export type SourceReader = (field: string, reference: string) => Effect.Effect<Source, GenerationFailed>

const unavailable = (field: string, reference: string, why: string) =>
  new GenerationFailed({ code: "media_source_unavailable", message: `${field} '${reference}' cannot be read: ${why}` })

export const reader = (options: {
  readonly principal: Principal
  readonly files: Files["Service"]
  readonly artifacts: Artifacts["Service"] | undefined
  readonly workspace: FileAccess | undefined
  readonly maxBytes: number
}): SourceReader =>
(field, reference) => {
  const failed = (why: string) => unavailable(field, reference, why)
  if (/^file_[0-9A-Za-z]+$/.test(reference)) {
    return options.files.content(options.principal, FileId.make(reference)).pipe(
      Effect.map(({ data, file }) => ({
        bytes: data,
        mediaType: file.mediaType,
        filename: file.filename
      })),
      Effect.mapError((e) => failed(e.message))
    )
  }
  if (/^art_[0-9A-Za-z]+$/.test(reference)) {
    const artifacts = options.artifacts
    if (artifacts === undefined) return Effect.fail(failed("no artifact store is configured"))
    return artifacts.get(options.principal, ArtifactId.make(reference)).pipe(
      Effect.flatMap((record) =>
        Effect.map(artifacts.content(record), (bytes) => ({
          bytes,
          mediaType: record.mediaType,
          filename: record.filename
        }))
      ),
      Effect.mapError((e) => failed(e.message))
    )
  }
  const workspace = options.workspace
  if (workspace === undefined) {
    return Effect.fail(
      failed("the run has no managed workspace; give a file id (file_...) or an artifact id (art_...)")
    )
  }
  return workspace.read(reference, options.maxBytes).pipe(
    Effect.map(({ bytes, path }) => {
      const filename = path.split("/").at(-1) ?? path
      return { bytes, mediaType: mediaTypeOf(filename, bytes), filename }
    }),
    Effect.mapError((e) => failed(e.message))
  )
}

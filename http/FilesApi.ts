/**
 * Contract of files (spec 4.11: the Files API attachments reference) and
 * artifacts (4.5 `svcArtifactId`: `GET /v1/artifacts/:id`). Bytes are
 * answered as they are, with their own media type; see README "Files and
 * artifacts".
 */
import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { ArtifactMetadata, FileDeleted, FileObject } from "../domain/Artifact.ts"
import { ClientId } from "../domain/Ids.ts"
import { Page, PageQuery } from "../domain/Page.ts"

/** The bytes, with the media type they were stored with (documented as binary). */
export const Bytes = Schema.Uint8Array.annotate({
  description: "The bytes, served with the media type they were stored with (Content-Type), as a download (Content-Disposition)."
}).pipe(HttpApiSchema.asUint8Array({ contentType: "application/octet-stream" }))

/**
 * `multipart/form-data` with one part, `file`. Parsed as a stream by the
 * handler (http/FileUpload.ts), which applies SVC_FILE_MAX_BYTES; this schema
 * documents the body.
 */
export const UploadBody = Schema.Struct({ file: Multipart.PersistedFileSchema }).annotate({
  description: "One part, file, with a filename. Its Content-Type is the file's mediaType (sniffed from the bytes when absent or " +
    "application/octet-stream). At most SVC_FILE_MAX_BYTES."
}).pipe(HttpApiSchema.asMultipartStream())

const fileParams = { id: ClientId.file }
const artifactParams = { id: ClientId.artifact }

export const FilesApi = HttpApiGroup.make("files")
  .add(HttpApiEndpoint.post("upload", "/v1/files", { payload: UploadBody, success: FileObject }))
  .add(HttpApiEndpoint.get("list", "/v1/files", { query: PageQuery, success: Page(FileObject) }))
  .add(HttpApiEndpoint.get("get", "/v1/files/:id", { params: fileParams, success: FileObject }))
  .add(HttpApiEndpoint.get("content", "/v1/files/:id/content", { params: fileParams, success: Bytes }))
  .add(HttpApiEndpoint.delete("delete", "/v1/files/:id", { params: fileParams, success: FileDeleted }))

export const ArtifactsApi = HttpApiGroup.make("artifacts")
  .add(HttpApiEndpoint.get("content", "/v1/artifacts/:id", { params: artifactParams, success: Bytes }))
  .add(HttpApiEndpoint.get("metadata", "/v1/artifacts/:id/metadata", { params: artifactParams, success: ArtifactMetadata }))

/** Signed artifact URLs (`Artifacts.signedUrl`): no API key, the signature is the grant. Added after Authentication. */
export const ArtifactLinksApi = HttpApiGroup.make("artifactLinks")
  .add(
    HttpApiEndpoint.get("download", "/v1/artifacts/:id/download", {
      params: artifactParams,
      query: { expires: Schema.String, signature: Schema.String },
      success: Bytes
    })
  )

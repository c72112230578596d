/**
 * Contract of files (spec 4.11: the Files API attachments reference) and
 * artifacts (4.5 `svcArtifactId`: `GET /v1/artifacts/:id`). Bytes are
 * answered as they are, with their own media type; see README "Files and
 * artifacts".
 */
import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ArtifactMetadata, FileDeleted, FileObject } from "../domain/Artifact.ts"
import { ClientId } from "../domain/Ids.ts"
import { Page, PageQuery } from "../domain/Page.ts"
import { doc } from "./ApiDocs.ts"
import { ApiConflict, ApiForbidden, ApiNotFound, ApiPayloadTooLarge, ApiServiceUnavailable } from "./ErrorEnvelope.ts"
import { IdempotencyHeaders } from "./Headers.ts"

/** The bytes, with the media type they were stored with (documented as binary). */
export const Bytes = Schema.Uint8Array.annotate({
  description:
    "The bytes, served with the media type they were stored with (Content-Type), as a download (Content-Disposition)."
}).pipe(HttpApiSchema.asUint8Array({ contentType: "application/octet-stream" }))

/**
 * `multipart/form-data` with one part, `file`. Parsed as a stream by the
 * handler (http/FileUpload.ts), which applies SVC_FILE_MAX_BYTES; this schema
 * documents the body.
 */
export const UploadBody = Schema.Struct({ file: Multipart.PersistedFileSchema }).annotate({
  description:
    "One part, file, with a filename. Its Content-Type is the file's mediaType (sniffed from the bytes when absent or " +
    "application/octet-stream). At most SVC_FILE_MAX_BYTES."
}).pipe(HttpApiSchema.asMultipartStream())

const fileParams = { id: ClientId.file }
const artifactParams = { id: ClientId.artifact }

export const FilesApi = HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.post("upload", "/v1/files", {
      headers: IdempotencyHeaders,
      payload: UploadBody,
      success: FileObject,
      error: [ApiPayloadTooLarge, ApiServiceUnavailable, ApiConflict]
    }).annotateMerge(
      doc(
        "Upload a file",
        "Stores one file, sent as `multipart/form-data` with the part `file` (`curl -F file=@report.pdf`), to attach to runs " +
          "(`input.attachments: [{ fileId }]`). Answers 200 with the File: its `mediaType` (the part's, or sniffed from the bytes), " +
          "`bytes` and lowercase hex `sha256`. Over SVC_FILE_MAX_BYTES is 413 `file_too_large`; past the workspace's storage " +
          "quota (SVC_WORKSPACE_STORAGE_QUOTA_BYTES, files and artifacts together) 413 `storage_quota_exceeded` with " +
          "`details: { field, used, limit }`, nothing stored; a key's upload past SVC_MAX_CONCURRENT_UPLOADS_PER_KEY in " +
          "flight is 429 `rate_limited` with Retry-After."
      )
    )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/files", { query: PageQuery, success: Page(FileObject) }).annotateMerge(
      doc("List files", "The workspace's files, newest first, a page at a time.")
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/files/:id", {
      params: fileParams,
      success: FileObject,
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc(
        "Get a file",
        "The file's name, media type, size and SHA-256. Another workspace's file is 403, an unknown one 404 `file_not_found`."
      )
    )
  )
  .add(
    HttpApiEndpoint.get("content", "/v1/files/:id/content", {
      params: fileParams,
      success: Bytes,
      error: [ApiForbidden, ApiNotFound, ApiServiceUnavailable]
    }).annotateMerge(
      doc("Download a file", "The file's bytes, with its media type and a download disposition.")
    )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/files/:id", {
      params: fileParams,
      success: FileDeleted,
      error: [ApiForbidden, ApiNotFound]
    }).annotateMerge(
      doc(
        "Delete a file",
        "Deletes the file and its bytes. Runs it was attached to keep their own copies (run-scoped artifacts)."
      )
    )
  )
  .annotate(
    OpenApi.Description,
    "Files: what clients upload to attach to runs (OpenAI's Files API, in this service's conventions)."
  )

export const ArtifactsApi = HttpApiGroup.make("artifacts")
  .add(
    HttpApiEndpoint.get("content", "/v1/artifacts/:id", {
      params: artifactParams,
      success: Bytes,
      error: [ApiForbidden, ApiNotFound, ApiServiceUnavailable]
    }).annotateMerge(
      doc(
        "Download an artifact",
        "The bytes of a run-scoped artifact (an attachment's copy, a workspace export, an archived result): the id of the " +
          "`{ kind: 'svc', id }` handles and of `svcArtifactId`. Expired artifacts are 404 `artifact_not_found`."
      )
    )
  )
  .add(
    HttpApiEndpoint.get("metadata", "/v1/artifacts/:id/metadata", {
      params: artifactParams,
      success: ArtifactMetadata,
      error: [ApiForbidden, ApiNotFound]
    })
      .annotateMerge(
        doc(
          "Describe an artifact",
          "The artifact's kind, run and thread, name, media type, size, SHA-256, and when it expires."
        )
      )
  )
  .annotate(
    OpenApi.Description,
    "Artifacts: what runs store (attachments, exports, archived results), kept for SVC_ARTIFACT_RETENTION_DAYS."
  )

/** Signed artifact URLs (`Artifacts.signedUrl`): no API key, the signature is the grant. Added after Authentication. */
export const ArtifactLinksApi = HttpApiGroup.make("artifactLinks")
  .add(
    HttpApiEndpoint.get("download", "/v1/artifacts/:id/download", {
      params: artifactParams,
      query: { expires: Schema.String, signature: Schema.String },
      success: Bytes,
      error: [ApiForbidden, ApiNotFound, ApiServiceUnavailable]
    }).annotateMerge(
      doc(
        "Download an artifact by signed URL",
        "Serves an artifact without an API key to whoever holds a URL this service signed (tool results with " +
          "`include-svc-signed`, export transfer handles), until `expires`. A forged, altered or expired URL is 403."
      )
    )
  )
  .annotate(OpenApi.Description, "Signed artifact URLs: temporary links that need no API key.")

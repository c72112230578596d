/**
 * Files and artifacts (spec 4.3 rule 1, 4.5 `svcArtifactId`, 4.11).
 *
 * A **file** is uploaded by a client (`POST /v1/files`) and lives in its
 * workspace until deleted. An **artifact** is what a run stores: a file
 * attached to a run (`attachment`), an export (`export`), an oversized tool
 * result (`overflow`) or media a run looked at (`media`, view_media); it is retention-scoped (`expiresAt`) and read with
 * `GET /v1/artifacts/:id`. Both keep their bytes in the artifact store
 * (src/artifacts/BlobStore.ts).
 */
import { Schema } from "effect"
import { ArtifactId, FileId, RunId, ThreadId } from "./Ids.ts"
import { Deleted } from "./Page.ts"

export const ArtifactKind = Schema.Literals(["attachment", "export", "overflow", "media"])
export type ArtifactKind = typeof ArtifactKind.Type

/** Lowercase hex SHA-256 of the bytes. */
const Sha256 = Schema.String.annotate({ description: "Lowercase hex SHA-256 of the bytes." })

export const FileObject = Schema.Struct({
  id: FileId,
  object: Schema.Literal("file"),
  filename: Schema.String,
  mediaType: Schema.String,
  bytes: Schema.Number,
  sha256: Sha256,
  createdAt: Schema.String
}).annotate({ identifier: "File" })
export type FileObject = typeof FileObject.Type

export const FileDeleted = Deleted("file").annotate({ identifier: "FileDeleted" })
export type FileDeleted = typeof FileDeleted.Type

/** The stored record of an artifact (the owner is internal; the API shows `ArtifactMetadata`). */
export interface ArtifactRecord {
  readonly id: ArtifactId
  readonly organizationId: string
  readonly workspaceId: string
  readonly runId: RunId | null
  readonly threadId: ThreadId | null
  readonly kind: ArtifactKind
  readonly filename: string
  readonly mediaType: string
  readonly bytes: number
  readonly sha256: string
  readonly createdAt: string
  /** After this instant the artifact is gone (SVC_ARTIFACT_RETENTION_DAYS after its creation). */
  readonly expiresAt: string
}

/** `GET /v1/artifacts/:id/metadata`. */
export const ArtifactMetadata = Schema.Struct({
  id: ArtifactId,
  object: Schema.Literal("artifact"),
  kind: ArtifactKind,
  runId: Schema.NullOr(RunId),
  threadId: Schema.NullOr(ThreadId),
  filename: Schema.String,
  mediaType: Schema.String,
  bytes: Schema.Number,
  sha256: Sha256,
  createdAt: Schema.String,
  expiresAt: Schema.String
}).annotate({ identifier: "Artifact" })
export type ArtifactMetadata = typeof ArtifactMetadata.Type

export const artifactMetadata = (r: ArtifactRecord): ArtifactMetadata => ({
  id: r.id,
  object: "artifact",
  kind: r.kind,
  runId: r.runId,
  threadId: r.threadId,
  filename: r.filename,
  mediaType: r.mediaType,
  bytes: r.bytes,
  sha256: r.sha256,
  createdAt: r.createdAt,
  expiresAt: r.expiresAt
})

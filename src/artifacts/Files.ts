/**
 * Files (spec 4.11, the Files API that attachments reference, 4.3 rule 1):
 * uploaded bytes owned by a workspace and kept until deleted. The bytes are in
 * the artifact store under `files/<id>`; the row in `files`. A file attached
 * to a run becomes a run-scoped `attachment` artifact (`toArtifact`), a copy
 * made inside the store, so deleting the file later leaves the run's copy.
 */
import { Context, Effect, Layer } from "effect"
import type { ArtifactRecord, FileDeleted, FileObject } from "../../domain/Artifact.ts"
import { InvalidRequest, NotFound, PermissionDenied } from "../../domain/Errors.ts"
import type { FileId, RunId, ThreadId } from "../../domain/Ids.ts"
import type { PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { requireOwned } from "../Ownership.ts"
import { pageWindow, toPage } from "../store/Cursor.ts"
import { FileRepo, type FileRow } from "../store/FileRepo.ts"
import { nowIso } from "../Time.ts"
import { Artifacts } from "./Artifacts.ts"
import { BlobStore } from "./BlobStore.ts"
import { octetStream, sniff } from "./MediaSniff.ts"
import {
  bytesAt,
  checkFilename,
  checkMediaType,
  checkSize,
  deleteQuietly,
  requireStore,
  sha256Hex,
  storeUnavailable
} from "./StoredBytes.ts"

/** What an upload carries: the part's file name, its declared media type (null: none), its bytes. */
export interface Upload {
  readonly filename: string
  readonly mediaType: string | null
  readonly data: Uint8Array
}

/** Where a file's bytes are in the store. */
export const fileKey = (id: FileId): string => `files/${id}`

/** The multipart part an upload comes in; errors about the upload name it. */
export const uploadField = "file"

const view = (row: FileRow): FileObject => ({
  id: row.id,
  object: "file",
  filename: row.filename,
  mediaType: row.mediaType,
  bytes: row.bytes,
  sha256: row.sha256,
  createdAt: row.createdAt
})

const make = Effect.gen(function*() {
  const { artifacts: config } = yield* ServiceConfig
  const repo = yield* FileRepo
  const blobs = yield* BlobStore
  const artifacts = yield* Artifacts
  const ids = yield* IdGenerator

  /** The file row for `principal`: 404 `file_not_found`, 403 for another workspace. */
  const owned = (principal: Principal, id: FileId) =>
    Effect.gen(function*() {
      yield* requireStore(config)
      return yield* Effect.flatMap(repo.find(id), requireOwned(principal, "file", id))
    })

  return {
    upload: Effect.fn("Files.upload")(function*(principal: Principal, upload: Upload) {
      yield* requireStore(config)
      if (upload.data.byteLength === 0) {
        return yield* InvalidRequest.forField(
          uploadField,
          `${uploadField} is empty: upload a file of at least one byte.`
        )
      }
      yield* checkSize(config, upload.data.byteLength, uploadField, "file_too_large")
      const declared = upload.mediaType === null ? octetStream : yield* checkMediaType(upload.mediaType, uploadField)
      const row: FileRow = {
        id: yield* ids.make("file"),
        organizationId: principal.organizationId,
        workspaceId: principal.workspaceId,
        filename: yield* checkFilename(upload.filename, uploadField),
        mediaType: declared === octetStream ? sniff(upload.data) : declared,
        bytes: upload.data.byteLength,
        sha256: sha256Hex(upload.data),
        createdAt: yield* nowIso
      }
      // Bytes first, then the row: a listed file always has its bytes.
      yield* blobs.put(fileKey(row.id), upload.data, row.mediaType).pipe(Effect.catch(storeUnavailable))
      yield* repo.insert(row)
      return view(row)
    }),
    list: Effect.fn("Files.list")(function*(principal: Principal, page: PageRequest) {
      yield* requireStore(config)
      const { limit, after } = yield* pageWindow(page)
      return toPage(yield* repo.list(principal, limit, after), limit, view)
    }),
    /** The file as the API shows it. */
    describe: Effect.fn("Files.describe")(function*(principal: Principal, id: FileId) {
      return view(yield* owned(principal, id))
    }),
    /** The file and its bytes. */
    content: Effect.fn("Files.content")(function*(principal: Principal, id: FileId) {
      const row = yield* owned(principal, id)
      return { file: view(row), data: yield* bytesAt(blobs, fileKey(id), "file", id) }
    }),
    /** The row first, then the bytes: a failure in between leaves unreachable bytes, never a file without them. */
    remove: Effect.fn("Files.remove")(function*(principal: Principal, id: FileId) {
      yield* owned(principal, id)
      if (!(yield* repo.remove(id))) return yield* NotFound.of("file", id)
      yield* deleteQuietly(blobs, fileKey(id))
      const deleted: FileDeleted = { id, object: "file", deleted: true }
      return deleted
    }),
    /**
     * The file as a run-scoped `attachment` artifact of `principal`'s
     * workspace. A missing file is 404 `file_not_found`, another workspace's
     * 403; their messages start with `item` (`input.attachments[0].fileId`)
     * when given.
     */
    toArtifact: Effect.fn("Files.toArtifact")(function*(
      principal: Principal,
      id: FileId,
      scope: { readonly runId: RunId | null; readonly threadId: ThreadId | null; readonly item?: string | undefined }
    ) {
      const named = (message: string) => (scope.item === undefined ? message : `${scope.item}: ${message}`)
      const row = yield* owned(principal, id).pipe(
        Effect.mapError((e) =>
          e._tag === "NotFound"
            ? new NotFound({ code: e.code, message: named(e.message) })
            : e._tag === "PermissionDenied"
            ? new PermissionDenied({ message: named(e.message) })
            : e
        )
      )
      const artifact: ArtifactRecord = yield* artifacts.copyIn({
        owner: principal,
        runId: scope.runId,
        threadId: scope.threadId,
        kind: "attachment",
        filename: row.filename,
        mediaType: row.mediaType,
        sourceKey: fileKey(id),
        bytes: row.bytes,
        sha256: row.sha256
      })
      return artifact
    })
  }
})

export class Files extends Context.Service<Files, Effect.Success<typeof make>>()("svc/Files") {
  static readonly layer = Layer.effect(Files)(make).pipe(Layer.provide(FileRepo.layer))
}

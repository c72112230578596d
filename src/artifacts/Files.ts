/**
 * Files (spec 4.11, the Files API that attachments reference, 4.3 rule 1):
 * uploaded bytes owned by a workspace and kept until deleted. The bytes are in
 * the artifact store under `files/<id>`; the row in `files`. A file attached
 * to a run becomes a run-scoped `attachment` artifact (`toArtifact`), a copy
 * made inside the store, so deleting the file later leaves the run's copy.
 *
 * An upload is two steps. `receive` streams the part's bytes to the store as
 * they arrive (never held whole), hashing and sniffing them on the way, and
 * refuses it as soon as it passes SVC_FILE_MAX_BYTES or the workspace's
 * storage quota; `commit` lists the file, admitted by the quota under the
 * workspace's lock. Bytes received but never committed (a refusal, a failure,
 * an Idempotency-Key replay) are removed when the request's scope closes.
 */
import { Context, Effect, Layer, Ref, Stream } from "effect"
import { createHash } from "node:crypto"
import type { ArtifactRecord, FileDeleted, FileObject } from "../../domain/Artifact.ts"
import { InvalidRequest, NotFound, PayloadTooLarge, PermissionDenied } from "../../domain/Errors.ts"
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
import { octetStream, sniffer } from "./MediaSniff.ts"
import { fits, StorageQuota } from "./StorageQuota.ts"
import { bytesAt, checkFilename, checkMediaType, deleteQuietly, requireStore, storeUnavailable } from "./StoredBytes.ts"

/** A file part as it arrives: the part's file name, its declared media type (null: none), its bytes. */
export interface IncomingFile<E> {
  readonly filename: string
  readonly mediaType: string | null
  readonly content: Stream.Stream<Uint8Array, E>
}

/** An upload whose bytes are stored, not yet listed: `commit` lists it, else its bytes go with the request's scope. */
export interface Received {
  readonly row: Omit<FileRow, "createdAt">
  /** Set once the file is listed: its bytes stay. */
  readonly kept: Ref.Ref<boolean>
}

/** Where a file's bytes are in the store. */
export const fileKey = (id: FileId): string => `files/${id}`

/** The multipart part an upload comes in; errors about the upload name it. */
export const uploadField = "file"

/** 413 `file_too_large`: the file passed SVC_FILE_MAX_BYTES (refused as soon as it does, so its size is not known). */
export const fileTooLarge = (maxFileBytes: number) =>
  new PayloadTooLarge({
    code: "file_too_large",
    message:
      `${uploadField} is larger than ${maxFileBytes} bytes, the most this deployment stores (SVC_FILE_MAX_BYTES).`,
    details: { field: uploadField }
  })

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
  const quota = yield* StorageQuota

  /** The file row for `principal`: 404 `file_not_found`, 403 for another workspace. */
  const owned = (principal: Principal, id: FileId) =>
    Effect.gen(function*() {
      yield* requireStore(config)
      return yield* Effect.flatMap(repo.find(id), requireOwned(principal, "file", id))
    })

  return {
    /**
     * Streams a file part to the store as it arrives, under a new file id:
     * 413 as soon as it passes SVC_FILE_MAX_BYTES or, with `quotaAsItArrives`,
     * the workspace's quota (`commit` checks the quota in any case: a replay
     * under an Idempotency-Key must reach its first answer, whatever the
     * workspace stores since); 400 when it is empty. What is stored and not
     * committed by the time the scope closes is removed.
     */
    receive: Effect.fn("Files.receive")(function*<E>(
      principal: Principal,
      incoming: IncomingFile<E>,
      quotaAsItArrives = true
    ) {
      yield* requireStore(config)
      const filename = yield* checkFilename(incoming.filename, uploadField)
      const declared = incoming.mediaType === null
        ? octetStream
        : yield* checkMediaType(incoming.mediaType, uploadField)
      const room = quotaAsItArrives ? yield* quota.room(principal) : { used: 0, limit: null }
      const id = yield* ids.make("file")
      const kept = yield* Ref.make(false)
      const stored = yield* Ref.make(false)
      const writer = yield* Effect.acquireRelease(
        blobs.writer(fileKey(id)).pipe(Effect.catch(storeUnavailable)),
        (writer) =>
          Effect.gen(function*() {
            if (yield* Ref.get(kept)) return
            if (yield* Ref.get(stored)) yield* deleteQuietly(blobs, fileKey(id))
            else yield* writer.abort
          })
      )
      const hash = createHash("sha256")
      const sniffed = sniffer()
      let bytes = 0
      yield* Stream.runForEach(incoming.content, (piece) =>
        Effect.gen(function*() {
          bytes += piece.byteLength
          if (bytes > config.fileMaxBytes) return yield* fileTooLarge(config.fileMaxBytes)
          yield* fits(room, bytes, uploadField)
          hash.update(piece)
          if (declared === octetStream) sniffed.update(piece)
          yield* writer.write(piece).pipe(Effect.catch(storeUnavailable))
        }))
      if (bytes === 0) {
        return yield* InvalidRequest.forField(
          uploadField,
          `${uploadField} is empty: upload a file of at least one byte.`
        )
      }
      const mediaType = declared === octetStream ? sniffed.result() : declared
      yield* writer.finish(mediaType).pipe(Effect.catch(storeUnavailable))
      yield* Ref.set(stored, true)
      const received: Received = {
        row: {
          id,
          organizationId: principal.organizationId,
          workspaceId: principal.workspaceId,
          filename,
          mediaType,
          bytes,
          sha256: hash.digest("hex")
        },
        kept
      }
      return received
    }),
    /** Lists a received file, when the workspace's quota admits it (413 `storage_quota_exceeded` otherwise). */
    commit: Effect.fn("Files.commit")(function*(principal: Principal, received: Received) {
      const row: FileRow = { ...received.row, createdAt: yield* nowIso }
      // Listed and kept together: an interruption in between would remove the bytes of a listed file.
      yield* Effect.uninterruptible(
        Effect.andThen(quota.admit(principal, row.bytes, uploadField, repo.insert(row)), Ref.set(received.kept, true))
      )
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
        sha256: row.sha256,
        field: scope.item
      })
      return artifact
    })
  }
})

export class Files extends Context.Service<Files, Effect.Success<typeof make>>()("svc/Files") {
  static readonly layer = Layer.effect(Files)(make).pipe(
    Layer.provide(Layer.mergeAll(FileRepo.layer, StorageQuota.layer))
  )
}

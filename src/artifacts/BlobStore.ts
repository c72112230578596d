/**
 * Where the bytes of files and artifacts live: one interface, chosen by
 * SVC_ARTIFACT_STORE. `postgres` (src/store/PgBlobStore.ts: a bytea table on
 * the service's own database, PGlite included) and `s3`
 * (src/artifacts/S3BlobStore.ts: any S3-compatible bucket). The metadata of
 * files and artifacts always lives in the database; a key names one object.
 *
 * Objects are written through a `BlobWriter`, in pieces as they arrive (an
 * upload is never held whole): the store writes them in bounded chunks, each
 * its own short statement or request, so a large object holds neither the
 * database nor the event loop for its whole length; it becomes readable only
 * when finished, and an aborted one leaves nothing. Objects are read whole
 * (their size is bounded by SVC_FILE_MAX_BYTES), chunk by chunk.
 */
import { Context, Data, Effect, type Option } from "effect"

/** The store could not be reached or refused the operation (the cause is logged, not shown to clients). */
export class BlobStoreFailed extends Data.TaggedError("BlobStoreFailed")<{
  readonly operation: "put" | "get" | "delete" | "copy" | "sweep"
  readonly key: string
  readonly cause: unknown
}> {}

/** An object being written: pieces in order, then `finish` (readable from then on) or `abort` (nothing left). */
export interface BlobWriter {
  /** Appends `bytes`; the store writes them out in chunks of its own size as they fill. */
  readonly write: (bytes: Uint8Array) => Effect.Effect<void, BlobStoreFailed>
  /** Writes what is left and makes the object readable under its key, with `contentType`. */
  readonly finish: (contentType: string) => Effect.Effect<void, BlobStoreFailed>
  /** Removes what was written; the object was never readable. Never fails (a failure is logged). */
  readonly abort: Effect.Effect<void>
}

export interface BlobStoreShape {
  /** Starts writing the object `key`, replacing what was there once finished. */
  readonly writer: (key: string) => Effect.Effect<BlobWriter, BlobStoreFailed>
  /** Stores `bytes` under `key`, replacing what was there (through a writer: in chunks). */
  readonly put: (key: string, bytes: Uint8Array, contentType: string) => Effect.Effect<void, BlobStoreFailed>
  /** The bytes under `key`; none when there is no such object. */
  readonly get: (key: string) => Effect.Effect<Option.Option<Uint8Array>, BlobStoreFailed>
  /** Removes `key`; removing a missing key is not an error. */
  readonly delete: (key: string) => Effect.Effect<void, BlobStoreFailed>
  /** Copies `from` to `to` inside the store (no round trip of the bytes through the service). */
  readonly copy: (from: string, to: string) => Effect.Effect<void, BlobStoreFailed>
  /**
   * Removes what writers started before `beforeMs` and never finished nor
   * aborted (a process that died mid-upload); answers how many objects. An S3
   * bucket leaves that to its lifecycle rule (AbortIncompleteMultipartUpload).
   */
  readonly sweep: (beforeMs: number) => Effect.Effect<number, BlobStoreFailed>
}

export class BlobStore extends Context.Service<BlobStore, BlobStoreShape>()("svc/BlobStore") {}

/** `put` for a store from its `writer`: the bytes written in one go, the object aborted if that fails. */
export const putThrough =
  (writer: BlobStoreShape["writer"]) =>
  (key: string, bytes: Uint8Array, contentType: string): Effect.Effect<void, BlobStoreFailed> =>
    Effect.flatMap(writer(key), (w) =>
      w.write(bytes).pipe(
        Effect.andThen(w.finish(contentType)),
        Effect.onError(() => w.abort)
      ))

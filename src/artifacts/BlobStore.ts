/**
 * Where the bytes of files and artifacts live: one interface, chosen by
 * SVC_ARTIFACT_STORE. `postgres` (src/store/PgBlobStore.ts: a bytea table on
 * the service's own database, PGlite included) and `s3`
 * (src/artifacts/S3BlobStore.ts: any S3-compatible bucket). The metadata of
 * files and artifacts always lives in the database; a key names one object.
 *
 * Objects are read whole: their size is bounded by SVC_FILE_MAX_BYTES, and a
 * bytea value comes back whole from PostgreSQL anyway.
 */
import { Context, Data, type Effect, type Option } from "effect"

/** The store could not be reached or refused the operation (the cause is logged, not shown to clients). */
export class BlobStoreFailed extends Data.TaggedError("BlobStoreFailed")<{
  readonly operation: "put" | "get" | "delete" | "copy"
  readonly key: string
  readonly cause: unknown
}> {}

export interface BlobStoreShape {
  /** Stores `bytes` under `key`, replacing what was there. */
  readonly put: (key: string, bytes: Uint8Array, contentType: string) => Effect.Effect<void, BlobStoreFailed>
  /** The bytes under `key`; none when there is no such object. */
  readonly get: (key: string) => Effect.Effect<Option.Option<Uint8Array>, BlobStoreFailed>
  /** Removes `key`; removing a missing key is not an error. */
  readonly delete: (key: string) => Effect.Effect<void, BlobStoreFailed>
  /** Copies `from` to `to` inside the store (no round trip of the bytes through the service). */
  readonly copy: (from: string, to: string) => Effect.Effect<void, BlobStoreFailed>
}

export class BlobStore extends Context.Service<BlobStore, BlobStoreShape>()("svc/BlobStore") {}

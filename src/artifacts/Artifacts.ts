/**
 * Artifacts: the bytes runs store (attachments, exports, oversized tool
 * results), each owned by a workspace, kept SVC_ARTIFACT_RETENTION_DAYS, and
 * read by the owning workspace with `GET /v1/artifacts/:id`, or by anyone
 * holding a signed URL (`signedUrl`) until it expires. Signed URLs are
 * `<SVC_PUBLIC_URL>/v1/artifacts/<id>/download?expires=<unix seconds>&signature=<sig>`,
 * the signature made with a key derived from the master key (SecretBox.sign,
 * purpose `artifact`) over `<id>.<expires>`; no API key is needed.
 *
 * Artifacts count towards their workspace's storage quota
 * (SVC_WORKSPACE_STORAGE_QUOTA_BYTES) until they expire: one that does not
 * fit is 413 `storage_quota_exceeded` before its bytes are stored (a run's
 * export tool answers it as a tool error; an attachment refuses the run).
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { ArtifactKind, ArtifactRecord } from "../../domain/Artifact.ts"
import {
  type InvalidRequest,
  NotFound,
  type PayloadTooLarge,
  PermissionDenied,
  type Unavailable
} from "../../domain/Errors.ts"
import type { ArtifactId, RunId, ThreadId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { requireOwned } from "../Ownership.ts"
import { SecretBox } from "../secrets/SecretBox.ts"
import { ArtifactRepo } from "../store/ArtifactRepo.ts"
import { toIso } from "../Time.ts"
import * as ArtifactStore from "./ArtifactStore.ts"
import { BlobStore } from "./BlobStore.ts"
import { fits, StorageQuota } from "./StorageQuota.ts"
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

export interface ArtifactOwner {
  readonly organizationId: string
  readonly workspaceId: string
}

export interface ArtifactPut {
  readonly owner: ArtifactOwner
  readonly runId?: RunId | null | undefined
  readonly threadId?: ThreadId | null | undefined
  readonly kind: ArtifactKind
  readonly filename: string
  readonly mediaType: string
  readonly data: Uint8Array
}

/** An artifact made from bytes already in the store (`sourceKey`), checked when they were stored. */
export interface ArtifactCopy extends Omit<ArtifactPut, "data"> {
  readonly sourceKey: string
  readonly bytes: number
  readonly sha256: string
  /** What a refusal names (the attachment's field); `data` when not given. */
  readonly field?: string | undefined
}

export interface SignedLink {
  readonly url: string
  readonly expiresAt: string
}

/** Where an artifact's bytes are in the store. */
export const artifactKey = (id: ArtifactId): string => `artifacts/${id}`

const purpose = "artifact"
const dayMs = 24 * 60 * 60 * 1000
/** At most this many artifacts are purged per recovery pass. */
const purgeBatch = 100

const make = Effect.gen(function*() {
  const { artifacts: config, publicUrl } = yield* ServiceConfig
  const repo = yield* ArtifactRepo
  const blobs = yield* BlobStore
  const ids = yield* IdGenerator
  const box = yield* SecretBox
  const quota = yield* StorageQuota

  /** The record, while it has not expired (the purge may not have run yet). */
  const live = (id: ArtifactId) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      return Option.filter(yield* repo.find(id), (r) => Date.parse(r.expiresAt) > now)
    })

  const found = (id: ArtifactId) =>
    Effect.flatMap(
      live(id),
      Option.match({
        onNone: () => Effect.fail(NotFound.of("artifact", id)),
        onSome: Effect.succeed
      })
    )

  const record = (input: Omit<ArtifactPut, "data">, bytes: number, sha256: string) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const stored: ArtifactRecord = {
        id: yield* ids.make("artifact"),
        organizationId: input.owner.organizationId,
        workspaceId: input.owner.workspaceId,
        runId: input.runId ?? null,
        threadId: input.threadId ?? null,
        kind: input.kind,
        filename: yield* checkFilename(input.filename, "filename"),
        mediaType: yield* checkMediaType(input.mediaType, "mediaType"),
        bytes,
        sha256,
        createdAt: toIso(now),
        expiresAt: toIso(now + config.retentionDays * dayMs)
      }
      return stored
    })

  /**
   * Bytes first, then the row, admitted by the workspace's quota (checked
   * before the bytes are written too): a row never points at bytes that
   * were not stored, and bytes the quota refused are removed.
   */
  const store = (stored: ArtifactRecord, field: string, write: Effect.Effect<void, Unavailable>) =>
    Effect.gen(function*() {
      yield* fits(yield* quota.room(stored), stored.bytes, field)
      yield* write
      yield* quota.admit(stored, stored.bytes, field, repo.insert(stored)).pipe(
        Effect.tapError(() => deleteQuietly(blobs, artifactKey(stored.id)))
      )
      return stored
    })

  const content = (artifact: ArtifactRecord) => bytesAt(blobs, artifactKey(artifact.id), "artifact", artifact.id)

  const signedLink = Effect.fn("Artifacts.signedLink")(function*(id: ArtifactId, ttlMs?: number) {
    yield* requireStore(config)
    const artifact = yield* found(id)
    const now = yield* Clock.currentTimeMillis
    const until = Math.min(now + (ttlMs ?? config.urlTtlSeconds * 1000), Date.parse(artifact.expiresAt))
    const expires = Math.max(Math.floor(until / 1000), Math.floor(now / 1000) + 1)
    const message = `${id}.${expires}`
    const query = `expires=${expires}&signature=${box.sign(purpose, message)}`
    return {
      url: `${publicUrl}/v1/artifacts/${id}/download?${query}`,
      expiresAt: toIso(expires * 1000)
    } satisfies SignedLink
  })

  return {
    put: Effect.fn("Artifacts.put")(function*(input: ArtifactPut) {
      yield* requireStore(config)
      yield* checkSize(config, input.data.byteLength, "data", "artifact_too_large")
      const stored = yield* record(input, input.data.byteLength, sha256Hex(input.data))
      return yield* store(
        stored,
        "data",
        blobs.put(artifactKey(stored.id), input.data, stored.mediaType).pipe(Effect.catch(storeUnavailable))
      )
    }),
    /** An artifact of bytes already in the store (a file attached to a run): copied inside the store. */
    copyIn: Effect.fn("Artifacts.copyIn")(function*(input: ArtifactCopy) {
      yield* requireStore(config)
      const stored = yield* record(input, input.bytes, input.sha256)
      return yield* store(
        stored,
        input.field ?? "data",
        blobs.copy(input.sourceKey, artifactKey(stored.id)).pipe(Effect.catch(storeUnavailable))
      )
    }),
    /** The artifact for `principal`'s workspace: 404 `artifact_not_found`, 403 for another workspace. */
    get: Effect.fn("Artifacts.get")(function*(principal: Principal, id: ArtifactId) {
      yield* requireStore(config)
      return yield* Effect.flatMap(live(id), requireOwned(principal, "artifact", id))
    }),
    /** The bytes (no ownership check: for the service itself). */
    read: Effect.fn("Artifacts.read")(function*(id: ArtifactId) {
      yield* requireStore(config)
      return yield* content(yield* found(id))
    }),
    /** The bytes of a record already read (`get`, `verifyLink`). */
    content,
    signedLink,
    /** An absolute URL serving the artifact without an API key until `ttlMs` (default SVC_ARTIFACT_URL_TTL_SECONDS) or its expiry. */
    signedUrl: (id: ArtifactId, ttlMs?: number) => Effect.map(signedLink(id, ttlMs), (link) => link.url),
    /** What a signed URL grants: the artifact, when the signature holds and neither the URL nor the artifact has expired. */
    verifyLink: Effect.fn("Artifacts.verifyLink")(function*(id: ArtifactId, expires: string, signature: string) {
      yield* requireStore(config)
      if (!/^[0-9]{1,12}$/.test(expires) || !box.verify(purpose, `${id}.${expires}`, signature)) {
        return yield* new PermissionDenied({
          message: "This artifact URL is not one this service signed (forged or altered)."
        })
      }
      if (Number(expires) * 1000 <= (yield* Clock.currentTimeMillis)) {
        return yield* new PermissionDenied({
          message: `This artifact URL expired at ${toIso(Number(expires) * 1000)}; ask for a new one.`
        })
      }
      return yield* found(id)
    }),
    /**
     * Retention (the recovery pass): expired artifacts and those of deleted
     * threads, bytes first; an artifact whose bytes could not be deleted
     * stays for the next pass. Also the bytes of uploads and artifacts whose
     * writer died a day ago or more. Returns how many artifacts were purged.
     */
    purgeExpired: Effect.gen(function*() {
      if (config.store.kind === "none") return 0
      const now = yield* Clock.currentTimeMillis
      yield* blobs.sweep(now - dayMs).pipe(
        Effect.catch((e) => Effect.logWarning("artifact store: could not sweep abandoned writes", e.cause))
      )
      const expired = yield* repo.purgeable(toIso(now), purgeBatch)
      const deleted = yield* Effect.filter(expired, (id) => deleteQuietly(blobs, artifactKey(id)))
      yield* repo.remove(deleted)
      return deleted.length
    }).pipe(Effect.withSpan("Artifacts.purgeExpired"))
  }
})

type Shape = Effect.Success<typeof make>

export class Artifacts extends Context.Service<Artifacts, Shape>()("svc/Artifacts") {
  /** With the BlobStore SVC_ARTIFACT_STORE names, which Files shares. */
  static readonly layer = Layer.effect(Artifacts)(make).pipe(
    Layer.provide(Layer.mergeAll(ArtifactRepo.layer, StorageQuota.layer)),
    Layer.provideMerge(ArtifactStore.layer)
  )
}

/** The failures of storing an artifact. */
export type ArtifactPutError = InvalidRequest | PayloadTooLarge | Unavailable

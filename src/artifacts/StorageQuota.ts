/**
 * The storage quota of a workspace (SVC_WORKSPACE_STORAGE_QUOTA_BYTES, 1 GiB by
 * default, 0 unlimited): the bytes of its files and of its unexpired
 * artifacts together. Storing more is 413 `storage_quota_exceeded` with
 * `details: { field, used, limit }` (the bytes stored before it). An upload is
 * checked as its bytes arrive (`room`, `fits`) and admitted when its row is
 * written (`admit`, under the workspace's lock); deleting a file or an
 * artifact's expiry frees its bytes.
 */
import { Context, Effect, Layer } from "effect"
import { PayloadTooLarge } from "../../domain/Errors.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { StorageRepo, type StorageScope } from "../store/StorageRepo.ts"
import { nowIso } from "../Time.ts"

/** What a workspace has stored and may store; unlimited when `limit` is null. */
export interface Room {
  readonly used: number
  readonly limit: number | null
}

export const quotaExceeded = (field: string, used: number, limit: number): PayloadTooLarge =>
  new PayloadTooLarge({
    code: "storage_quota_exceeded",
    message: `Storing ${field} would pass this workspace's storage quota: ${used} of its ${limit} bytes are used by ` +
      "its files and artifacts (SVC_WORKSPACE_STORAGE_QUOTA_BYTES). Delete files, or wait for artifacts to expire.",
    details: { field, used, limit }
  })

/** 413 when `bytes` more do not fit in `room`. */
export const fits = (room: Room, bytes: number, field: string): Effect.Effect<void, PayloadTooLarge> =>
  room.limit !== null && room.used + bytes > room.limit
    ? Effect.fail(quotaExceeded(field, room.used, room.limit))
    : Effect.void

export class StorageQuota extends Context.Service<StorageQuota, {
  /** The workspace's usage now, and its limit (no query when unlimited). */
  readonly room: (owner: StorageScope) => Effect.Effect<Room>
  /** Runs `store` (the row of `bytes` more) when they fit, under the workspace's lock; 413 `field` otherwise. */
  readonly admit: <A>(
    owner: StorageScope,
    bytes: number,
    field: string,
    store: Effect.Effect<A>
  ) => Effect.Effect<A, PayloadTooLarge>
}>()("svc/StorageQuota") {
  static readonly layer = Layer.effect(StorageQuota)(
    Effect.gen(function*() {
      const limit = (yield* ServiceConfig).artifacts.workspaceQuotaBytes
      const repo = yield* StorageRepo
      return {
        room: (owner: StorageScope) =>
          limit === null
            ? Effect.succeed<Room>({ used: 0, limit })
            : Effect.map(Effect.flatMap(nowIso, (now) => repo.used(owner, now)), (used): Room => ({ used, limit })),
        admit: <A>(owner: StorageScope, bytes: number, field: string, store: Effect.Effect<A>) =>
          limit === null ? store : Effect.gen(function*() {
            const admission = yield* repo.admit(owner, bytes, limit, yield* nowIso, store)
            return admission._tag === "Admitted"
              ? admission.value
              : yield* quotaExceeded(field, admission.used, limit)
          })
      }
    })
  ).pipe(Layer.provide(StorageRepo.layer))
}

/**
 * Durable storage of workspace snapshots, behind one interface: the latest
 * archive of each thread's workspace files, sealed with the master key
 * (WorkspaceLifecycle seals before writing and opens after reading, so the
 * store only ever holds ciphertext), with the id of the key that sealed it, a
 * version that grows by one per write, the node that wrote it, and the size
 * and SHA-256 of the stored bytes. Implemented on PostgreSQL (`bytea` in
 * `workspace_snapshots`, src/store/WorkspaceSnapshotRepo.ts), which works the
 * same on PGlite; a blob directory or an S3-compatible store would implement
 * the same four methods.
 */
import { Context, type Effect, type Option } from "effect"
import type { ThreadId } from "../../domain/Ids.ts"
import type { SnapshotUnavailable } from "./SnapshotUnavailable.ts"

/** What is stored about a snapshot, without its bytes. */
export interface SnapshotHead {
  readonly version: number
  /** The master key that sealed it; null: stored before snapshots were sealed (the plain archive). */
  readonly keyId: string | null
  readonly node: string
  readonly bytes: number
  readonly sha256: string
  readonly createdAt: string
}

export interface NewSnapshot {
  readonly node: string
  readonly keyId: string
  /** Of `data`, the sealed bytes. */
  readonly sha256: string
  readonly data: Uint8Array
  readonly createdAt: string
}

export class SnapshotStore extends Context.Service<SnapshotStore, {
  /** The latest snapshot of the thread's workspace, if any. */
  readonly head: (threadId: ThreadId) => Effect.Effect<Option.Option<SnapshotHead>>
  /** The bytes of that version (none: it was replaced or deleted meanwhile). */
  readonly read: (threadId: ThreadId, version: number) => Effect.Effect<Option.Option<Uint8Array>, SnapshotUnavailable>
  /** Stores a new latest snapshot in one statement; its version (the previous one plus one). */
  readonly write: (threadId: ThreadId, snapshot: NewSnapshot) => Effect.Effect<number, SnapshotUnavailable>
  readonly remove: (threadIds: ReadonlyArray<ThreadId>) => Effect.Effect<void>
}>()("svc/SnapshotStore") {}

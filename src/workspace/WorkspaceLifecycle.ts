/**
 * Durability and lifecycle of managed workspaces (spec 2.1.3 `lifecycle`,
 * 2.2 statuses, 7 `snapshot_unavailable`). A workspace lives on the disk of
 * the node that ran it; its durable copy is the latest snapshot in the
 * SnapshotStore, taken when each run's use of it ends (when the files changed
 * since the last one, or the stored one is not sealed under the current master
 * key) and restored on a node whose own copy is missing or older. Snapshots
 * are sealed with the master key (SealedState, bound to their thread) before
 * they are stored and opened after they are read; one that cannot be opened
 * or stored is `SnapshotUnavailable`, and ends the run. A local marker, `<root>/versions/<id>` (root-only), records which
 * snapshot version the local copy started from and the fingerprint of the
 * tree at that moment.
 *
 * Lifecycle, by the cluster's recovery pass: a workspace unused for its
 * `idleMinutes` (default 30) becomes `hibernated`; unused for its
 * `retentionDays` (default 30), `archived`, and its snapshot is deleted. Every
 * node stops the services of and releases the local copies of hibernated workspaces (once the snapshot
 * holds them), archived ones, and those of deleted threads.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Schedule, Schema, Semaphore } from "effect"
import { existsSync } from "node:fs"
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { hostname } from "node:os"
import { join, resolve } from "node:path"
import { ThreadId } from "../../domain/Ids.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { SealedState } from "../secrets/SealedState.ts"
import { WorkspaceLifecycleRepo } from "../store/WorkspaceLifecycleRepo.ts"
import { nowIso } from "../Time.ts"
import { Sandbox } from "./Sandbox.ts"
import { type SnapshotHead, SnapshotStore } from "./SnapshotStore.ts"
import { SnapshotUnavailable } from "./SnapshotUnavailable.ts"
import * as WorkspaceArchive from "./WorkspaceArchive.ts"
import { validId } from "./WorkspaceRoot.ts"
import { WorkspaceServices } from "./WorkspaceServices.ts"

export const DefaultIdleMinutes = 30
export const DefaultRetentionDays = 30

type Owner = WorkspaceArchive.Owner
const isThreadId = Schema.is(ThreadId)

/**
 * Where the problems of a run's snapshot go: a warning for the run's stream (the snapshot was not
 * taken: too large, tar failed), or the run's end (it could not be stored: `snapshot_unavailable`).
 */
export interface SnapshotReport {
  readonly warn: (message: string) => Effect.Effect<void>
  readonly unavailable: (error: SnapshotUnavailable) => Effect.Effect<void>
}

export type LocalCopy =
  | { readonly _tag: "Local"; readonly dir: string }
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Elsewhere" }

/** Which snapshot the local copy started from, and its tree's fingerprint then. */
interface Marker {
  readonly version: number
  readonly fingerprint: string
}

export class WorkspaceLifecycle extends Context.Service<WorkspaceLifecycle, {
  /**
   * Called before the sandbox opens, with the thread's workspace status: the snapshot to restore
   * (the local copy, missing or older, was removed), if any. An archived workspace starts empty.
   * The workspace counts as in use on this node until `release`.
   */
  readonly prepare: (threadId: ThreadId, status: string | undefined) => Effect.Effect<Option.Option<SnapshotHead>>
  /** Restores the snapshot into the opened (empty) workspace. */
  readonly restore: (
    threadId: ThreadId,
    workspace: Owner,
    head: SnapshotHead
  ) => Effect.Effect<void, SnapshotUnavailable>
  /**
   * Snapshots the workspace when its files changed since the last snapshot (or that one is sealed
   * under an older master key), then ends its use on this node (undefined: it never opened, or its
   * restore failed: nothing to snapshot). A snapshot that cannot be taken or stored is reported
   * (and logged), never a crash.
   */
  readonly release: (
    threadId: ThreadId,
    workspace: Owner | undefined,
    report: SnapshotReport
  ) => Effect.Effect<void>
  /** The lifecycle pass (hibernation and retention of every workspace), then this node's local copies. */
  readonly sweep: Effect.Effect<void>
  /** Forgets the local markers of deleted threads. */
  readonly forget: (threadIds: ReadonlyArray<ThreadId>) => Effect.Effect<void>
  /** Use of the workspace other than a run (preview traffic): it postpones hibernation. At most one write a minute per workspace. */
  readonly touch: (threadId: ThreadId) => Effect.Effect<void>
  /**
   * Where the workspace's files can be read on this node (the API's file browser): its local copy
   * when it is at least as new as the latest snapshot; `empty` when there are no files anywhere
   * (never opened, or archived); `elsewhere` when only the snapshot, or another node, holds them.
   */
  readonly localCopy: (threadId: ThreadId) => Effect.Effect<LocalCopy>
}>()("svc/WorkspaceLifecycle") {
  static readonly layer = Layer.effect(WorkspaceLifecycle)(Effect.gen(function*() {
    const config = yield* ServiceConfig
    const store = yield* SnapshotStore
    const sealer = yield* SealedState
    const repo = yield* WorkspaceLifecycleRepo
    const sandbox = yield* Sandbox
    const services = yield* WorkspaceServices
    const root = resolve(config.workspaceRoot)
    const workspacesDir = join(root, "workspaces")
    const versionsDir = join(root, "versions")
    const node = `${hostname()}:${process.pid}`
    const lock = Semaphore.makeUnsafe(1)
    const inUse = new Map<string, number>()
    /** Hibernated copies whose snapshot could not be stored, with their tree's fingerprint then. */
    const kept = new Map<string, string>()
    /** When this node last recorded a workspace's use outside runs (ms). */
    const touched = new Map<string, number>()

    const markerPath = (id: string) => join(versionsDir, id)
    const readMarker = (id: string): Effect.Effect<Marker | undefined> =>
      Effect.promise(() =>
        readFile(markerPath(id), "utf8").then((text): Marker | undefined => {
          const [version, fingerprint] = text.trim().split(" ")
          return version !== undefined && fingerprint !== undefined && /^\d+$/.test(version)
            ? { version: Number(version), fingerprint }
            : undefined
        }, () => undefined)
      )
    const writeMarker = (id: string, marker: Marker) =>
      Effect.promise(async () => {
        await mkdir(versionsDir, { recursive: true, mode: 0o700 })
        await writeFile(markerPath(id), `${marker.version} ${marker.fingerprint}\n`, { mode: 0o600 })
      })
    /** Lets go of this node's copy: its services stop first, so no sandbox process runs in the tree being deleted. */
    const dropLocal = (id: string) =>
      services.stop(id).pipe(
        Effect.andThen(sandbox.remove(id)),
        Effect.andThen(Effect.promise(() => rm(markerPath(id), { force: true })))
      )

    const prepare = Effect.fn("WorkspaceLifecycle.prepare")(function*(threadId: ThreadId, status: string | undefined) {
      return yield* lock.withPermits(1)(Effect.gen(function*() {
        inUse.set(threadId, (inUse.get(threadId) ?? 0) + 1)
        if (status === "archived") {
          yield* dropLocal(threadId)
          return Option.none()
        }
        const head = yield* store.head(threadId)
        if (Option.isNone(head)) return head
        const marker = yield* readMarker(threadId)
        const local = existsSync(join(workspacesDir, threadId))
        if (local && marker !== undefined && marker.version >= head.value.version) return Option.none()
        yield* dropLocal(threadId)
        return head
      }))
    })

    const restore = Effect.fn("WorkspaceLifecycle.restore")(
      function*(threadId: ThreadId, workspace: Owner, head: SnapshotHead) {
        const data = yield* store.read(threadId, head.version)
        if (Option.isNone(data)) {
          return yield* new SnapshotUnavailable({
            message: `snapshot version ${head.version} of the workspace is gone`
          })
        }
        if (WorkspaceArchive.sha256(data.value) !== head.sha256) {
          return yield* new SnapshotUnavailable({
            message:
              `snapshot version ${head.version} of the workspace does not match its SHA-256; it cannot be restored`
          })
        }
        // A snapshot stored before snapshots were sealed (no key id) is the plain archive.
        const archive = head.keyId === null
          ? data.value
          : yield* sealer.open("workspace_snapshot", threadId, { keyId: head.keyId, data: data.value }).pipe(
            Effect.mapError((e) =>
              new SnapshotUnavailable({
                message: `snapshot version ${head.version} of the workspace cannot be decrypted: ${e.message}`
              })
            )
          )
        const failed = yield* WorkspaceArchive.extract(workspace, archive)
        if (failed !== undefined) {
          return yield* new SnapshotUnavailable({
            message: `snapshot version ${head.version} of the workspace cannot be unpacked: ${failed}`
          })
        }
        const fingerprint = yield* WorkspaceArchive.fingerprint(workspace)
        if (fingerprint !== undefined) yield* writeMarker(threadId, { version: head.version, fingerprint })
      }
    )

    /**
     * A snapshot unless the tree is the one the latest snapshot holds, sealed under the current key;
     * why none was taken, if so. Fails when it cannot be stored.
     */
    const snapshot = (threadId: ThreadId, workspace: Owner): Effect.Effect<string | undefined, SnapshotUnavailable> =>
      Effect.gen(function*() {
        const fingerprint = yield* WorkspaceArchive.fingerprint(workspace)
        const marker = yield* readMarker(threadId)
        const head = yield* store.head(threadId)
        const current = fingerprint !== undefined && marker?.fingerprint === fingerprint &&
          Option.isSome(head) && head.value.version === marker.version && head.value.keyId === sealer.currentKeyId
        if (current) return undefined
        const archive = yield* WorkspaceArchive.create(workspace, config.workspaceSnapshotMaxBytes)
        if (archive._tag === "TooLarge") {
          return `the workspace's snapshot is larger than SVC_WORKSPACE_SNAPSHOT_MAX_BYTES (${config.workspaceSnapshotMaxBytes} bytes) and was not stored; its files stay on this node only`
        }
        if (archive._tag === "Failed") return `the workspace's snapshot could not be taken: ${archive.message}`
        const sealed = yield* sealer.seal("workspace_snapshot", threadId, archive.data)
        const version = yield* store.write(threadId, {
          node,
          keyId: sealed.keyId,
          sha256: WorkspaceArchive.sha256(sealed.data),
          data: sealed.data,
          createdAt: yield* nowIso
        })
        if (fingerprint !== undefined) yield* writeMarker(threadId, { version, fingerprint })
        return undefined
      })

    const release = Effect.fn("WorkspaceLifecycle.release")(
      function*(threadId: ThreadId, workspace: Owner | undefined, report: SnapshotReport) {
        if (workspace !== undefined) {
          const problem = yield* snapshot(threadId, workspace).pipe(
            Effect.catchTag("SnapshotUnavailable", (e) => Effect.succeed(e)),
            Effect.catchCause((cause) =>
              Effect.as(
                Effect.logError("workspace snapshot failed", cause),
                "the workspace's snapshot could not be stored (see the service's log)"
              )
            )
          )
          if (problem !== undefined) {
            yield* Effect.logWarning("workspace snapshot not stored").pipe(
              Effect.annotateLogs({
                thread_id: threadId,
                problem: typeof problem === "string" ? problem : problem.message
              })
            )
            yield* typeof problem === "string" ? report.warn(problem) : report.unavailable(problem)
          }
          yield* repo.markUsed(threadId, yield* nowIso).pipe(
            Effect.catchCause((cause) => Effect.logWarning("workspace use not recorded", cause))
          )
        }
        yield* lock.withPermits(1)(Effect.sync(() => {
          const count = (inUse.get(threadId) ?? 1) - 1
          if (count <= 0) inUse.delete(threadId)
          else inUse.set(threadId, count)
        }))
      }
    )

    /**
     * Local copies this node may let go: those of archived workspaces and deleted threads, and of
     * hibernated ones once the snapshot holds their files (else they stay, hibernated with files kept).
     */
    const releaseLocal = Effect.gen(function*() {
      const names = yield* Effect.promise(() => readdir(workspacesDir).catch((): Array<string> => []))
      const local = names.filter((name) => validId.test(name)).filter(isThreadId)
      if (local.length === 0) return
      const statuses = yield* repo.statuses(local)
      for (const id of local) {
        const status = statuses.get(id)
        if (status !== undefined && status !== "hibernated" && status !== "archived") continue
        yield* lock.withPermits(1)(Effect.gen(function*() {
          if (inUse.has(id)) return
          if (status === "hibernated") {
            const dir = join(workspacesDir, id)
            const uid = yield* Effect.promise(() => stat(dir).then((s) => s.uid, () => undefined))
            const owner = { dir, uid: process.getuid?.() === 0 ? uid : undefined }
            // A copy that could not be stored is tried again only once its files changed.
            const fingerprint = yield* WorkspaceArchive.fingerprint(owner)
            if (fingerprint !== undefined && kept.get(id) === fingerprint) return
            const problem = yield* snapshot(id, owner).pipe(
              Effect.catchTag("SnapshotUnavailable", (e) => Effect.succeed(e.message))
            )
            if (problem !== undefined) {
              if (fingerprint !== undefined) kept.set(id, fingerprint)
              return yield* Effect.logWarning("hibernated workspace kept on this node").pipe(
                Effect.annotateLogs({ thread_id: id, problem })
              )
            }
          }
          kept.delete(id)
          // Hibernated, archived or deleted: its processes stop with its local copy.
          yield* dropLocal(id)
        }))
      }
    })

    const sweep = Effect.gen(function*() {
      const now = yield* nowIso
      const hibernated = yield* repo.hibernateIdle(now, DefaultIdleMinutes)
      const archived = yield* repo.archiveExpired(now, DefaultRetentionDays)
      if (hibernated.length > 0 || archived.length > 0) {
        yield* Effect.logInfo("workspace lifecycle").pipe(
          Effect.annotateLogs({ hibernated: hibernated.length, archived: archived.length })
        )
      }
      yield* releaseLocal
    }).pipe(Effect.catchCause((cause) => Effect.logWarning("workspace lifecycle pass failed", cause)))

    // Every node lets go of its own copies; the cluster-wide statuses are the recovery pass's.
    yield* Effect.forkScoped(
      Effect.repeat(
        releaseLocal.pipe(Effect.catchCause((cause) => Effect.logWarning("releasing local workspaces failed", cause))),
        Schedule.spaced(Duration.millis(config.recoveryIntervalMs))
      )
    )

    const localCopy = Effect.fn("WorkspaceLifecycle.localCopy")(function*(threadId: ThreadId) {
      const dir = join(workspacesDir, threadId)
      const head = yield* store.head(threadId)
      const local = existsSync(dir)
      if (Option.isNone(head)) return local ? { _tag: "Local", dir } as const : { _tag: "Empty" } as const
      const marker = yield* readMarker(threadId)
      return local && marker !== undefined && marker.version >= head.value.version
        ? { _tag: "Local", dir } as const
        : { _tag: "Elsewhere" } as const
    })

    return {
      prepare,
      restore,
      release,
      sweep,
      localCopy,
      forget: (threadIds) =>
        Effect.forEach(threadIds, (id) => Effect.promise(() => rm(markerPath(id), { force: true })), { discard: true }),
      touch: (threadId) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (now - (touched.get(threadId) ?? Number.NEGATIVE_INFINITY) < 60_000) return
          touched.set(threadId, now)
          yield* repo.markUsed(threadId, yield* nowIso).pipe(
            Effect.catchCause((cause) => Effect.logWarning("workspace use not recorded", cause))
          )
        })
    }
  }))
}

/**
 * The workspace root on disk: `<root>/workspaces/<id>` (one directory per
 * workspace), `<root>/egress` (the egress proxies' sockets) and `<root>/ports/<id>` (the
 * sockets of a workspace's service ports, made by its sandboxes). As root, each workspace gets
 * its own unprivileged host uid, recorded as the owner of its directory (mode
 * 0700): the first guess hashes the directory's path, then the next free uid
 * of the range. The uids must reach their directories, so every directory
 * above must be traversable by others (o+x); a root that is not usable is
 * reported when a workspace opens, so the service itself still starts.
 */
import { Effect, Semaphore } from "effect"
import { chmod, chown, mkdir, readdir, stat } from "node:fs/promises"
import { dirname, join, resolve as resolvePath } from "node:path"
import * as Bwrap from "./BwrapCommand.ts"
import * as SeccompFilter from "./SeccompFilter.ts"
import { WorkspaceUnavailable } from "./WorkspaceUnavailable.ts"

export interface RootOptions {
  /** Workspaces live in `<root>/workspaces/`; every directory above must be traversable by others (mode o+x). */
  readonly root: string
  /** First host uid of the range given to workspaces (root only). */
  readonly uidBase?: number
  readonly uidCount?: number
}

/**
 * Whose egress proxy: a run's (for as long as it executes), the workspace's services' (as long as they
 * run), or one code-hosting git operation's (checkout, fetch, push: as long as that command runs).
 */
export type EgressUser = "run" | "services" | "git"

export const validId = /^[A-Za-z0-9_-]{1,128}$/

const unavailable = (message: string) => (cause: unknown) =>
  new WorkspaceUnavailable({ message: `${message}: ${cause instanceof Error ? cause.message : String(cause)}` })

const fsStep = <A>(what: string, f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: unavailable(what) })

/** FNV-1a: a stable first guess of a workspace's uid slot. */
const slotOf = (key: string, count: number): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193) >>> 0
  return hash % count
}

/** The first directory from `dir` up that others cannot traverse (mode o+x), if any. */
const closedAncestor = async (dir: string): Promise<string | undefined> => {
  if (((await stat(dir)).mode & 0o001) === 0) return dir
  return dirname(dir) === dir ? undefined : closedAncestor(dirname(dir))
}

export const make = Effect.fn("WorkspaceRoot.make")(function*(options: RootOptions) {
  const root = resolvePath(options.root)
  const workspacesDir = join(root, "workspaces")
  const egressDir = join(root, "egress")
  const portsDir = join(root, "ports")
  const asRoot = process.getuid?.() === 0
  const uidBase = options.uidBase ?? 200_000
  const uidCount = options.uidCount ?? 100_000
  const allocate = Semaphore.makeUnsafe(1)

  /** Creates the layout once, reads the host's system directories for bwrap and compiles the seccomp filter. */
  const layout = yield* Effect.gen(function*() {
    yield* fsStep(`the workspace root ${root} is not usable`, async () => {
      await mkdir(workspacesDir, { recursive: true, mode: 0o711 })
      await mkdir(egressDir, { recursive: true, mode: 0o711 })
      await mkdir(portsDir, { recursive: true, mode: 0o711 })
      if (asRoot) await chmod(workspacesDir, 0o711)
    })
    const closed = asRoot
      ? yield* fsStep(`the workspace root ${root} is not usable`, () => closedAncestor(workspacesDir))
      : undefined
    if (closed !== undefined) {
      return yield* new WorkspaceUnavailable({
        message:
          `the workspace root ${root} is not usable: ${closed} is not traversable by other users (mode o+x), so a workspace's uid cannot reach its directory`
      })
    }
    const arch = SeccompFilter.archOf(process.arch)
    if (arch === undefined) {
      return yield* new WorkspaceUnavailable({
        message: `the sandbox's seccomp filter has no system call table for ${process.arch} (x64 and arm64 have one)`
      })
    }
    const seccomp = SeccompFilter.program(arch)
    return yield* Effect.try({
      try: () => Bwrap.hostLayout(seccomp),
      catch: unavailable("cannot read the host's system directories")
    })
  }).pipe(Effect.cached)

  const dirOf = (id: string) => join(workspacesDir, id)
  /** The run's proxy and the services' own (ids have no `.`, so no workspace's name meets another's). */
  const socketOf = (id: string, user: EgressUser = "run") =>
    join(egressDir, user === "run" ? `${id}.sock` : `${id}.${user}.sock`)
  const portsDirOf = (id: string) => join(portsDir, id)

  /** The workspace's uid: its directory's owner, or a free slot of the range for a new one. */
  const allocateDir = (id: string) =>
    allocate.withPermits(1)(Effect.tryPromise({
      try: async () => {
        const dir = dirOf(id)
        const existing = await stat(dir).catch(() => undefined)
        if (existing !== undefined) return asRoot ? existing.uid : undefined
        if (!asRoot) {
          await mkdir(dir, { mode: 0o700 })
          return undefined
        }
        const taken = new Set<number>()
        for (const name of await readdir(workspacesDir)) {
          const owner = await stat(join(workspacesDir, name)).then((s) => s.uid, () => undefined)
          if (owner !== undefined) taken.add(owner)
        }
        let slot = slotOf(dir, uidCount) // the path, so two roots on one host seldom pick the same uid
        for (let tries = 0; taken.has(uidBase + slot) && tries < uidCount; tries++) slot = (slot + 1) % uidCount
        const uid = uidBase + slot
        await mkdir(dir, { mode: 0o700 })
        await chown(dir, uid, uid)
        return uid
      },
      catch: unavailable(`cannot create the directory of workspace ${id}`)
    }))

  /** Creates the directory when new; its uid. Never one outside the range (a directory made by hand as root would be root's). */
  const ensureDir = (id: string): Effect.Effect<number | undefined, WorkspaceUnavailable> =>
    layout.pipe(
      Effect.andThen(allocateDir(id)),
      Effect.flatMap((uid) =>
        uid === undefined || (uid >= uidBase && uid < uidBase + uidCount)
          ? Effect.succeed(uid)
          : Effect.fail(
            new WorkspaceUnavailable({
              message: `the directory of workspace ${id} is owned by uid ${uid}, outside the workspace uid range`
            })
          )
      )
    )

  /** The proxy's socket of a workspace, made connectable by the workspace's uid only. */
  const egressOf = (
    id: string,
    uid: number | undefined,
    user: EgressUser = "run"
  ): Effect.Effect<string, WorkspaceUnavailable> => {
    const path = socketOf(id, user)
    return Effect.promise(() => stat(path).then((s) => s.isSocket(), () => false)).pipe(
      Effect.flatMap((listening) =>
        listening
          ? fsStep(`cannot hand the egress socket to workspace ${id}`, async () => {
            if (uid !== undefined) await chown(path, uid, uid)
            await chmod(path, 0o600)
            return path
          })
          : Effect.fail(
            new WorkspaceUnavailable({ message: `the egress proxy of workspace ${id} is not listening at ${path}` })
          )
      )
    )
  }

  /** The workspace's ports directory, created owned by its uid (mode 0700): its services make their sockets there. */
  const ensurePortsDir = (id: string, uid: number | undefined): Effect.Effect<string, WorkspaceUnavailable> => {
    const dir = portsDirOf(id)
    return layout.pipe(Effect.andThen(fsStep(`cannot create the ports directory of workspace ${id}`, async () => {
      await mkdir(dir, { recursive: true, mode: 0o700 })
      if (uid !== undefined) await chown(dir, uid, uid)
      return dir
    })))
  }

  return {
    layout,
    dirOf,
    ensureDir,
    egressOf,
    egressSocketPath: (id: string, user: EgressUser = "run") => Effect.as(layout, socketOf(id, user)),
    portsDirOf,
    ensurePortsDir
  }
})

/**
 * The sandbox of managed workspaces (spec 2.1.3): one directory per
 * workspace under `<root>/workspaces/<id>`, and commands run in it through
 * bubblewrap (see BwrapCommand for what the sandbox contains).
 *
 * Identity: when the service runs as root, each workspace gets its own
 * unprivileged host uid (from a range, recorded as the owner of its
 * directory), and bwrap starts as that uid. A user namespace made by root
 * would map back to root; made by an unprivileged uid it has no power on the
 * host, and RLIMIT_NPROC, which the kernel counts per host uid, becomes a
 * per-workspace process limit. A service not running as root runs sandboxes
 * as itself (the process limit then counts the service's own processes too).
 *
 * Limits: CPU, memory, processes and file size are rlimits (prlimit); the
 * wall time kills the process group (and with it the sandbox's pid
 * namespace); the workspace's disk bytes are measured with `du` before a
 * command, every `diskCheckIntervalMs` while it runs and once after it, and a
 * command that takes the workspace over its limit is killed. Going over a limit ends
 * the command with a result saying which limit, never the service.
 */
import { chmod, chown, mkdir, readdir, rm, stat, writeFile } from "node:fs/promises"
import { dirname, join, resolve as resolvePath } from "node:path"
import { Context, Effect, Fiber, Layer, Option, Semaphore } from "effect"
import * as Bwrap from "./BwrapCommand.ts"
import type { Limits } from "./ResourceClass.ts"
import * as SandboxProcess from "./SandboxProcess.ts"
import * as WorkspacePath from "./WorkspacePath.ts"
import { WorkspaceUnavailable } from "./WorkspaceUnavailable.ts"

export interface Workspace {
  readonly id: string
  /** The directory on the host (bound at /workspace inside). */
  readonly dir: string
  /** The host uid and gid commands run as; undefined: the service's own. */
  readonly uid: number | undefined
  readonly limits: Limits
  /** The egress proxy's socket (restricted or public network); undefined: offline, no route out at all. */
  readonly egress: string | undefined
}

export interface OpenOptions {
  /**
   * `proxy`: the workspace has a network, through the egress proxy the caller started on
   * `egressSocketPath(id)` (EgressProxy.ts applies the workspace's network mode). Default offline.
   */
  readonly network?: "offline" | "proxy"
}

export interface ExecRequest {
  readonly command: string
  /** Relative to the workspace root; default the root. */
  readonly cwd?: string | undefined
  /** Added to the sandbox's minimal environment (PATH, HOME=/workspace, LANG, USER). */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** Capped at the workspace's maxTimeoutMs; default its defaultTimeoutMs. */
  readonly timeoutMs?: number | undefined
  /** Written to the command's standard input (none: /dev/null). */
  readonly stdin?: string | undefined
  /** Bytes kept of each output; default the workspace's outputBytes. */
  readonly outputBytes?: number | undefined
}

export type LimitKind = "wall_time" | "cpu_time" | "file_size" | "disk"

export interface ExecResult {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
  readonly truncated: boolean
  /** Set when a limit ended the command (or, for disk, the command left the workspace over its limit). */
  readonly limit?: { readonly kind: LimitKind; readonly message: string }
}

export interface SandboxOptions {
  /** Workspaces live in `<root>/workspaces/`; every directory above must be traversable by others (mode o+x). */
  readonly root: string
  /** First host uid of the range given to workspaces (root only). */
  readonly uidBase?: number
  readonly uidCount?: number
  readonly diskCheckIntervalMs?: number
}

const validId = /^[A-Za-z0-9_-]{1,128}$/
const validEnvName = /^[A-Za-z_][A-Za-z0-9_]*$/
const baseEnv = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: Bwrap.mountPoint, LANG: "C.UTF-8", USER: "sandbox" }
const proxyEnv = {
  HTTP_PROXY: Bwrap.proxyUrl,
  HTTPS_PROXY: Bwrap.proxyUrl,
  http_proxy: Bwrap.proxyUrl,
  https_proxy: Bwrap.proxyUrl,
  NO_PROXY: "localhost,127.0.0.1",
  no_proxy: "localhost,127.0.0.1"
}

const unavailable = (message: string) => (cause: unknown) =>
  new WorkspaceUnavailable({ message: `${message}: ${cause instanceof Error ? cause.message : String(cause)}` })

/** FNV-1a: a stable first guess of a workspace's uid slot. */
const slotOf = (id: string, count: number): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193) >>> 0
  return hash % count
}

export class Sandbox extends Context.Service<Sandbox, {
  /** Creates the workspace's directory when new, and checks that a sandbox starts. */
  readonly open: (id: string, limits: Limits, options?: OpenOptions) => Effect.Effect<Workspace, WorkspaceUnavailable>
  /** Where the egress proxy of workspace `id` must listen for `network: "proxy"` (a directory only the service writes). */
  readonly egressSocketPath: (id: string) => Effect.Effect<string, WorkspaceUnavailable>
  readonly exec: (workspace: Workspace, request: ExecRequest) => Effect.Effect<ExecResult, WorkspaceUnavailable>
  /** Bytes the workspace's files take on disk. */
  readonly diskUsage: (workspace: Workspace) => Effect.Effect<number>
  /** Deletes the workspace's files (call when none of its commands runs). */
  readonly remove: (id: string) => Effect.Effect<void>
}>()("svc/Sandbox") {
  static readonly layer = (options: SandboxOptions) => Layer.effect(Sandbox)(make(options))
}

export const make = Effect.fn("Sandbox.make")(function*(options: SandboxOptions) {
  const root = resolvePath(options.root)
  const workspacesDir = join(root, "workspaces")
  const etcDir = join(root, "etc")
  const egressDir = join(root, "egress")
  const asRoot = process.getuid?.() === 0
  const uidBase = options.uidBase ?? 200_000
  const uidCount = options.uidCount ?? 100_000
  const diskCheckIntervalMs = options.diskCheckIntervalMs ?? 500
  const allocate = Semaphore.makeUnsafe(1)

  const fsStep = <A>(what: string, f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: unavailable(what) })

  /** The first directory from `dir` up that others cannot traverse (mode o+x), if any. */
  const closedAncestor = async (dir: string): Promise<string | undefined> => {
    if (((await stat(dir)).mode & 0o001) === 0) return dir
    return dirname(dir) === dir ? undefined : closedAncestor(dirname(dir))
  }

  /** Missing root or a directory others cannot traverse: reported at open, so the service itself still starts. */
  const setup = yield* Effect.gen(function*() {
    yield* fsStep(`the workspace root ${root} is not usable`, async () => {
      await mkdir(workspacesDir, { recursive: true, mode: 0o711 })
      await mkdir(etcDir, { recursive: true, mode: 0o755 })
      await mkdir(egressDir, { recursive: true, mode: 0o711 })
      await writeFile(join(etcDir, "passwd"), Bwrap.passwd, { mode: 0o644 })
      await writeFile(join(etcDir, "group"), Bwrap.group, { mode: 0o644 })
      if (asRoot) await chmod(workspacesDir, 0o711)
    })
    const closed = asRoot ? yield* fsStep(`the workspace root ${root} is not usable`, () => closedAncestor(workspacesDir)) : undefined
    if (closed !== undefined) {
      return yield* new WorkspaceUnavailable({
        message: `the workspace root ${root} is not usable: ${closed} is not traversable by other users (mode o+x), so a workspace's uid cannot reach its directory`
      })
    }
    return yield* Effect.try({ try: () => Bwrap.hostLayout(etcDir), catch: unavailable("cannot read the host's system directories") })
  }).pipe(Effect.cached)

  const dirOf = (id: string) => join(workspacesDir, id)

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
        let slot = slotOf(dirOf(id), uidCount) // the path, so two roots on one host seldom pick the same uid
        for (let tries = 0; taken.has(uidBase + slot) && tries < uidCount; tries++) slot = (slot + 1) % uidCount
        const uid = uidBase + slot
        await mkdir(dir, { mode: 0o700 })
        await chown(dir, uid, uid)
        return uid
      },
      catch: unavailable(`cannot create the directory of workspace ${id}`)
    }))

  /** Never run a sandbox as a uid outside the range (a directory made by hand as root would be root's). */
  const ensureDir = (id: string) =>
    Effect.flatMap(allocateDir(id), (uid) =>
      uid === undefined || (uid >= uidBase && uid < uidBase + uidCount)
        ? Effect.succeed(uid)
        : Effect.fail(new WorkspaceUnavailable({ message: `the directory of workspace ${id} is owned by uid ${uid}, outside the workspace uid range` })))

  const diskUsage = (workspace: Workspace): Effect.Effect<number> =>
    SandboxProcess.start({
      file: "du",
      args: ["-s", "-x", "-B1", "--", workspace.dir],
      env: { PATH: baseEnv.PATH, LC_ALL: "C" },
      reaper: false,
      stdin: undefined,
      outputBytes: 4_096
    }).pipe(
      Effect.flatMap((p) => p.wait),
      Effect.map((finished) => Number.parseInt(finished.stdout, 10) || 0)
    )

  /** Kills the sandbox's init (see SandboxProcess.kill); the whole group if that did not end it. */
  const stop = (running: SandboxProcess.Running) =>
    running.kill.pipe(
      Effect.andThen(Effect.timeoutOption(running.wait, 2_000)),
      Effect.flatMap((done) => (Option.isSome(done) ? Effect.void : running.killGroup))
    )

  const limitMessage = (kind: LimitKind, workspace: Workspace, timeoutMs: number, usage: number): string => {
    const { limits } = workspace
    switch (kind) {
      case "wall_time":
        return `the command ran longer than its wall time of ${timeoutMs} ms and was killed`
      case "cpu_time":
        return `the command used more than ${limits.cpuSeconds} s of CPU time and was killed`
      case "file_size":
        return `the command tried to write a file larger than the limit of ${limits.diskBytes} bytes and was stopped`
      case "disk":
        return `the workspace holds ${usage} bytes, over its disk limit of ${limits.diskBytes} bytes; the command was stopped. Delete files to make room.`
    }
  }

  const exec = Effect.fn("Sandbox.exec")(function*(workspace: Workspace, request: ExecRequest) {
    const layout = yield* setup
    const { limits } = workspace
    const timeoutMs = Math.max(1, Math.min(request.timeoutMs ?? limits.defaultTimeoutMs, limits.maxTimeoutMs))
    const cwd = WorkspacePath.resolve(request.cwd ?? ".")
    if ("error" in cwd) return { exitCode: 2, stdout: "", stderr: `cwd: ${cwd.error}\n`, truncated: false }
    const badName = Object.keys(request.env ?? {}).find((name) => !validEnvName.test(name))
    if (badName !== undefined) {
      return { exitCode: 2, stdout: "", stderr: `env: '${badName}' is not a valid environment variable name\n`, truncated: false }
    }
    const command = Bwrap.argv({
      uid: workspace.uid,
      layout,
      workspaceDir: workspace.dir,
      limits: { ...limits, fileSizeBytes: limits.diskBytes },
      cwd: cwd.inner,
      command: request.command,
      egress: workspace.egress
    })
    // A workspace already over its limit (an earlier command's burst) may still run commands that
    // shrink it; what no command may do is grow the workspace past max(limit, its size before).
    const allowed = Math.max(limits.diskBytes, yield* diskUsage(workspace))
    let stoppedFor: LimitKind | undefined
    let usage = 0
    const finished = yield* Effect.acquireUseRelease(
      SandboxProcess.start({
        ...command,
        reaper: workspace.uid !== undefined,
        env: { ...baseEnv, ...(workspace.egress === undefined ? {} : proxyEnv), ...request.env },
        stdin: request.stdin,
        outputBytes: request.outputBytes ?? limits.outputBytes
      }),
      (running) =>
        Effect.gen(function*() {
          const stopFor = (kind: LimitKind) =>
            Effect.suspend(() => {
              stoppedFor ??= kind
              return stop(running)
            })
          const watchDisk = Effect.sleep(diskCheckIntervalMs).pipe(
            Effect.andThen(diskUsage(workspace)),
            Effect.flatMap((bytes) => {
              usage = bytes
              return bytes > allowed ? stopFor("disk") : Effect.void
            }),
            Effect.forever
          )
          const watcher = yield* Effect.forkChild(watchDisk)
          const done = yield* Effect.timeoutOption(running.wait, timeoutMs)
          if (Option.isNone(done)) yield* stopFor("wall_time")
          const result = Option.isSome(done) ? done.value : yield* running.wait
          yield* Fiber.interrupt(watcher)
          return result
        }),
      stop
    )
    if (finished.spawnError !== undefined || !finished.status.includes("child-pid")) {
      return yield* new WorkspaceUnavailable({
        message: `the sandbox could not start: ${finished.spawnError ?? (finished.stderr.trim() || `exit code ${finished.exitCode}`)}`
      })
    }
    usage = yield* diskUsage(workspace)
    const kind: LimitKind | undefined = finished.exitCode === 152
      ? "cpu_time"
      : finished.exitCode === 153
      ? "file_size"
      : stoppedFor ?? (usage > allowed ? "disk" : undefined)
    // Killed by us: report it as SIGKILL (137); unshare, seeing its child killed, adds a line of its own.
    const killed = stoppedFor !== undefined
    const result: ExecResult = {
      exitCode: killed ? 137 : finished.exitCode,
      stdout: finished.stdout,
      stderr: killed ? finished.stderr.replace(/unshare: [^\n]*\n$/, "") : finished.stderr,
      truncated: finished.truncated
    }
    return kind === undefined ? result : { ...result, limit: { kind, message: limitMessage(kind, workspace, timeoutMs, usage) } }
  })

  const socketOf = (id: string) => join(egressDir, `${id}.sock`)
  const egressSocketPath = (id: string) => Effect.as(setup, socketOf(id))

  /** The proxy's socket, made connectable by the workspace's uid only. */
  const egressOf = (id: string, uid: number | undefined) => {
    const path = socketOf(id)
    return Effect.promise(() => stat(path).then((s) => s.isSocket(), () => false)).pipe(
      Effect.flatMap((listening) =>
        listening
          ? fsStep(`cannot hand the egress socket to workspace ${id}`, async () => {
            if (uid !== undefined) await chown(path, uid, uid)
            await chmod(path, 0o600)
            return path
          })
          : Effect.fail(new WorkspaceUnavailable({ message: `the egress proxy of workspace ${id} is not listening at ${path}` }))
      )
    )
  }

  const open = Effect.fn("Sandbox.open")(function*(id: string, limits: Limits, options: OpenOptions = {}) {
    if (!validId.test(id)) return yield* new WorkspaceUnavailable({ message: `'${id}' is not a valid workspace id` })
    yield* setup
    const uid = yield* ensureDir(id)
    const egress = options.network === "proxy" ? yield* egressOf(id, uid) : undefined
    const workspace: Workspace = { id, dir: dirOf(id), uid, limits, egress }
    const probe = yield* exec(workspace, { command: "true", timeoutMs: 10_000 })
    if (probe.exitCode !== 0) {
      return yield* new WorkspaceUnavailable({ message: `the sandbox started but a trivial command failed: ${probe.stderr.trim()}` })
    }
    return workspace
  })

  const remove = Effect.fn("Sandbox.remove")(function*(id: string) {
    if (!validId.test(id)) return
    yield* Effect.promise(() => rm(dirOf(id), { recursive: true, force: true }))
  })

  return Sandbox.of({ open, egressSocketPath, exec, diskUsage, remove })
})

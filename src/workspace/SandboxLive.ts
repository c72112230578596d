/**
 * The sandbox of managed workspaces, built (the contract is Sandbox.ts): one
 * directory per workspace under `<root>/workspaces/<id>`, and commands run in
 * it through bubblewrap (see BwrapCommand for what the sandbox contains).
 *
 * Identity: when the service runs as root, each workspace has its own
 * unprivileged host uid (WorkspaceRoot), which its commands run as. Their user
 * namespace is made by that uid (BwrapCommand), so it has no power on the
 * host, and RLIMIT_NPROC, which the kernel counts per host uid, becomes a
 * per-workspace process limit. A service not running as
 * root runs sandboxes as itself (the process limit then counts the service's
 * own processes too).
 *
 * Limits: CPU, memory, processes and file size are rlimits (prlimit); the
 * wall time kills the process group (and with it the sandbox's pid
 * namespace); the workspace's disk bytes are measured with `du` before a
 * command, every `diskCheckIntervalMs` while it runs and once after it, and a
 * command that takes the workspace over its limit is killed. Going over a limit ends
 * the command with a result saying which limit, never the service.
 */
import { Effect, Fiber, Layer, Option } from "effect"
import { rm } from "node:fs/promises"
import { join } from "node:path"
import { isReservedEnvName } from "../../domain/SecretContext.ts"
import * as Bwrap from "./BwrapCommand.ts"
import * as ExecCheck from "./ExecCheck.ts"
import * as PortSocket from "./PortSocket.ts"
import type { Limits } from "./ResourceClass.ts"
import {
  type ExecRequest,
  type ExecResult,
  type LimitKind,
  type OpenOptions,
  type PipedRequest,
  Sandbox,
  type ServiceRequest,
  type Workspace
} from "./Sandbox.ts"
import * as SandboxProcess from "./SandboxProcess.ts"
import * as ServiceScript from "./ServiceScript.ts"
import * as WorkspaceRoot from "./WorkspaceRoot.ts"
import { WorkspaceUnavailable } from "./WorkspaceUnavailable.ts"

export interface SandboxOptions extends WorkspaceRoot.RootOptions {
  readonly diskCheckIntervalMs?: number
}

const baseEnv = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: Bwrap.mountPoint, LANG: "C.UTF-8", USER: "sandbox" }
/**
 * The environment of a sandboxed process: the caller's variables (workspace_env secrets), never
 * a reserved name (they reach the host programs that start the sandbox too, some as root), then
 * the sandbox's own, which no caller overrides.
 */
const environment = (proxied: boolean, env: Readonly<Record<string, string>> | undefined): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(env ?? {}).filter(([name]) => !isReservedEnvName(name))),
  ...(proxied ? proxyEnv : {}),
  ...baseEnv
})

const proxyEnv = {
  HTTP_PROXY: Bwrap.proxyUrl,
  HTTPS_PROXY: Bwrap.proxyUrl,
  http_proxy: Bwrap.proxyUrl,
  https_proxy: Bwrap.proxyUrl,
  NO_PROXY: "localhost,127.0.0.1",
  no_proxy: "localhost,127.0.0.1"
}

export const make = Effect.fn("Sandbox.make")(function*(options: SandboxOptions) {
  const root = yield* WorkspaceRoot.make(options)
  const diskCheckIntervalMs = options.diskCheckIntervalMs ?? 500

  const diskUsage = (workspace: Workspace): Effect.Effect<number> =>
    SandboxProcess.start({
      file: "du",
      // Apparent sizes: a sparse file counts for what it claims, not the blocks it happens to use.
      args: ["-s", "-x", "-B1", "--apparent-size", "--", workspace.dir],
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

  /** The ports of the workspace's running services, reached from a command on 127.0.0.1. */
  const commandPorts = (id: string): Bwrap.PortsBinding | undefined => {
    const connect = PortSocket.listed(root.portsDirOf(id))
    return connect.length === 0 ? undefined : { dir: root.portsDirOf(id), writable: false, connect }
  }

  const exec = Effect.fn("Sandbox.exec")(function*(workspace: Workspace, request: ExecRequest) {
    const layout = yield* root.layout
    const { limits } = workspace
    const timeoutMs = ExecCheck.wallTime(workspace, request.timeoutMs)
    const cwd = ExecCheck.place(request)
    if ("error" in cwd) return ExecCheck.refused(cwd.error)
    const command = Bwrap.argv({
      uid: workspace.uid,
      layout,
      workspaceDir: workspace.dir,
      limits: { ...limits, fileSizeBytes: limits.diskBytes },
      cwd: cwd.inner,
      command: request.command,
      egress: workspace.egress,
      ports: commandPorts(workspace.id),
      readOnly: request.readOnly
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
        env: environment(workspace.egress !== undefined, request.env),
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
        message: `the sandbox could not start: ${
          finished.spawnError ?? (finished.stderr.trim() || `exit code ${finished.exitCode}`)
        }`
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
    return kind === undefined
      ? result
      : { ...result, limit: { kind, message: limitMessage(kind, workspace, timeoutMs, usage) } }
  })

  const open = Effect.fn("Sandbox.open")(function*(id: string, limits: Limits, options: OpenOptions = {}) {
    if (!WorkspaceRoot.validId.test(id)) {
      return yield* new WorkspaceUnavailable({ message: `'${id}' is not a valid workspace id` })
    }
    const uid = yield* root.ensureDir(id)
    const egress = options.network === "proxy" ? yield* root.egressOf(id, uid, options.egressUser) : undefined
    const workspace: Workspace = { id, dir: root.dirOf(id), uid, limits, egress }
    const probe = yield* exec(workspace, { command: "true", timeoutMs: 10_000 })
    if (probe.exitCode !== 0) {
      return yield* new WorkspaceUnavailable({
        message: `the sandbox started but a trivial command failed: ${probe.stderr.trim()}`
      })
    }
    return workspace
  })

  const startService = Effect.fn("Sandbox.startService")(function*(workspace: Workspace, request: ServiceRequest) {
    const layout = yield* root.layout
    const cwd = ExecCheck.place(request)
    if ("error" in cwd) return yield* new WorkspaceUnavailable({ message: cwd.error })
    const dir = yield* root.ensurePortsDir(workspace.id, workspace.uid)
    const port = request.port
    // A socket left by an earlier run of the service is in the way (unlink never follows a link).
    // Something else planted there (a directory) keeps the service from starting; never a defect of the run.
    if (port !== undefined) {
      yield* Effect.tryPromise({
        try: () => rm(join(dir, PortSocket.fileOf(port)), { force: true }),
        catch: (e) =>
          new WorkspaceUnavailable({
            message: `the socket path of port ${port} is taken: ${e instanceof Error ? e.message : String(e)}`
          })
      })
    }
    const egress = request.egress === undefined
      ? undefined
      : yield* root.egressOf(workspace.id, workspace.uid, "services")
    const command = Bwrap.argv({
      uid: workspace.uid,
      layout,
      workspaceDir: workspace.dir,
      limits: { ...workspace.limits, fileSizeBytes: workspace.limits.diskBytes },
      cwd: cwd.inner,
      command: ServiceScript.script({ name: request.name, command: request.command, port }),
      egress,
      ports: { dir, writable: true, connect: PortSocket.listed(dir).filter((p) => p !== port) }
    })
    const running = yield* Effect.acquireRelease(
      SandboxProcess.start({
        ...command,
        reaper: workspace.uid !== undefined,
        env: environment(egress !== undefined, request.env),
        stdin: undefined,
        outputBytes: 4_096
      }),
      stop
    )
    const wait = Effect.map(running.wait, (finished) => ({
      exitCode: finished.exitCode,
      startError: finished.spawnError !== undefined || !finished.status.includes("child-pid")
        ? finished.spawnError ?? (finished.stderr.trim() || `exit code ${finished.exitCode}`)
        : undefined
    }))
    const ready = port === undefined
      ? Effect.void
      : Effect.raceFirst(PortSocket.appeared(dir, port), Effect.asVoid(running.wait))
    return { wait, ready }
  })

  const startPiped = Effect.fn("Sandbox.startPiped")(function*(workspace: Workspace, request: PipedRequest) {
    const layout = yield* root.layout
    const command = Bwrap.argv({
      uid: workspace.uid,
      layout,
      workspaceDir: workspace.dir,
      limits: request.limits,
      cwd: Bwrap.mountPoint,
      command: request.command,
      egress: workspace.egress,
      ports: commandPorts(workspace.id)
    })
    const running = yield* Effect.acquireRelease(
      SandboxProcess.start({
        ...command,
        reaper: workspace.uid !== undefined,
        env: environment(workspace.egress !== undefined, {}),
        stdin: undefined,
        outputBytes: 16_384,
        channel: true
      }),
      stop
    )
    if (running.channel === undefined || running.pid === undefined) {
      const finished = yield* running.wait
      return yield* new WorkspaceUnavailable({
        message: `the sandbox could not start: ${finished.spawnError ?? `exit code ${finished.exitCode}`}`
      })
    }
    const wait = Effect.map(running.wait, (finished) => ({
      exitCode: finished.exitCode,
      startError: finished.spawnError !== undefined || !finished.status.includes("child-pid")
        ? finished.spawnError ?? (finished.stderr.trim() || `exit code ${finished.exitCode}`)
        : undefined
    }))
    return { wait, ...running.channel, pid: running.pid, kill: stop(running) }
  })

  const remove = Effect.fn("Sandbox.remove")(function*(id: string) {
    if (!WorkspaceRoot.validId.test(id)) return
    yield* Effect.promise(() => rm(root.dirOf(id), { recursive: true, force: true }))
    yield* Effect.promise(() => rm(root.portsDirOf(id), { recursive: true, force: true }))
  })

  return Sandbox.of({
    open,
    egressSocketPath: root.egressSocketPath,
    exec,
    startService,
    startPiped,
    portsDirOf: root.portsDirOf,
    diskUsage,
    remove
  })
})

export const layer = (options: SandboxOptions) => Layer.effect(Sandbox)(make(options))

/**
 * The sandbox of managed workspaces (spec 2.1.3): one directory per
 * workspace under `<root>/workspaces/<id>`, and commands run in it through
 * bubblewrap (see BwrapCommand for what the sandbox contains). This file is
 * the service's contract; SandboxLive.ts builds it.
 */
import { Context, type Effect, type Scope } from "effect"
import type { Readable, Writable } from "node:stream"
import type * as Bwrap from "./BwrapCommand.ts"
import type { Limits } from "./ResourceClass.ts"
import type * as WorkspaceRoot from "./WorkspaceRoot.ts"
import type { WorkspaceUnavailable } from "./WorkspaceUnavailable.ts"

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
  /** Whose proxy socket `proxy` binds (default the run's). */
  readonly egressUser?: WorkspaceRoot.EgressUser
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
  /** Host directories bound read-only inside for this command (the document worker's code and libraries). */
  readonly readOnly?: ReadonlyArray<Bwrap.ReadOnlyBinding> | undefined
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

/** A declared service (spec 2.1.3 `services`), run by `startService`. */
export interface ServiceRequest {
  readonly name: string
  readonly command: string
  /** Relative to the workspace root; default the root. */
  readonly cwd?: string | undefined
  /** Served on `<ports dir>/<port>.sock` once it listens inside. */
  readonly port?: number | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  /** The services' egress proxy socket (`egressSocketPath(id, "services")`, listening); undefined: offline. */
  readonly egress?: string | undefined
}

export interface ServiceProcess {
  /** Ends when the service does: its exit code, and why its sandbox did not start if it did not. */
  readonly wait: Effect.Effect<{ readonly exitCode: number; readonly startError: string | undefined }>
  /** Completes once the service's port has its socket (at once without a port), or the service ended. */
  readonly ready: Effect.Effect<void>
}

/** A long-lived program with a channel to the service (the managed browser: src/browser/BrowserProcess.ts). */
export interface PipedRequest {
  /** Run with `bash -lc` in the workspace root; its fds 8 (read) and 9 (write) are the channel. */
  readonly command: string
  /** Its own limits instead of the workspace's command limits (a browser reserves address space: BrowserLimits). */
  readonly limits: Bwrap.CommandLimits
}

export interface PipedProcess {
  /** Ends when the program does: its exit code, and why its sandbox did not start if it did not. */
  readonly wait: Effect.Effect<{ readonly exitCode: number; readonly startError: string | undefined }>
  /** What the service writes to the program (its fd 8) and reads from it (its fd 9). */
  readonly input: Writable
  readonly output: Readable
  /** The host pid of the sandbox's leader: its process tree is the program's (memory is measured over it). */
  readonly pid: number
  /** Kills the sandbox (and everything in it). */
  readonly kill: Effect.Effect<void>
}

export class Sandbox extends Context.Service<Sandbox, {
  /** Creates the workspace's directory when new, and checks that a sandbox starts. */
  readonly open: (id: string, limits: Limits, options?: OpenOptions) => Effect.Effect<Workspace, WorkspaceUnavailable>
  /** Where the egress proxy of workspace `id` must listen for `network: "proxy"` (a directory only the service writes); the services' own with `"services"`. */
  readonly egressSocketPath: (
    id: string,
    user?: WorkspaceRoot.EgressUser
  ) => Effect.Effect<string, WorkspaceUnavailable>
  readonly exec: (workspace: Workspace, request: ExecRequest) => Effect.Effect<ExecResult, WorkspaceUnavailable>
  /**
   * Starts a long-lived service in the workspace: the same sandbox, limits (but wall time and the
   * disk check, see README), uid and environment rules as a command, its output appended to
   * `.svc/logs/<name>.log`. It is stopped when the scope closes.
   */
  readonly startService: (
    workspace: Workspace,
    request: ServiceRequest
  ) => Effect.Effect<ServiceProcess, WorkspaceUnavailable, Scope.Scope>
  /**
   * Starts a program in the workspace's sandbox (same uid, network through the workspace's egress
   * proxy, the running services' ports on 127.0.0.1) that talks to the service on a channel; it is
   * killed when the scope closes.
   */
  readonly startPiped: (
    workspace: Workspace,
    request: PipedRequest
  ) => Effect.Effect<PipedProcess, WorkspaceUnavailable, Scope.Scope>
  /** The host directory of the workspace's port sockets (see PortSocket). */
  readonly portsDirOf: (id: string) => string
  /** Bytes the workspace's files take on disk. */
  readonly diskUsage: (workspace: Workspace) => Effect.Effect<number>
  /** Deletes the workspace's files (call when none of its commands runs). */
  readonly remove: (id: string) => Effect.Effect<void>
}>()("svc/Sandbox") {}

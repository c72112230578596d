/**
 * One sandboxed process seen from the host: spawned in its own process
 * group, stdout and stderr kept up to a cap each (the rest is read and
 * dropped so the process never blocks on a full pipe), and a signal to the
 * whole group (the sandbox's pid namespaces go down with their init).
 */
import { Deferred, Effect, Result } from "effect"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { constants } from "node:os"
import { Readable, Writable } from "node:stream"

export interface ProcessSpec {
  readonly file: string
  readonly args: ReadonlyArray<string>
  /** The whole environment of the process (nothing of the service's is inherited). */
  readonly env: Readonly<Record<string, string>>
  readonly stdin: string | undefined
  /** Bytes kept of stdout and of stderr each. */
  readonly outputBytes: number
  /** The spawned program forks the real work and reaps it (see `kill`). */
  readonly reaper: boolean
  /** Written to fds 4, 5, ... of the process, each then closed (bwrap's options, its seccomp program, files). */
  readonly inputs?: ReadonlyArray<Uint8Array> | undefined
  /**
   * Two more descriptors after the inputs (fds 8 and 9 with bwrap's four): a channel the sandboxed
   * program talks on (the managed browser's DevTools pipe, see src/browser/BrowserProcess.ts).
   */
  readonly channel?: boolean | undefined
}

export interface Finished {
  /** The exit code, or 128 + the signal number when a signal ended it. */
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
  /** Some stdout or stderr was dropped. */
  readonly truncated: boolean
  /** Bytes the process wrote on fd 3 (bwrap's status). */
  readonly status: string
  /** Set when the process could not be spawned at all. */
  readonly spawnError: string | undefined
}

export interface Running {
  readonly wait: Effect.Effect<Finished>
  /**
   * SIGKILL to the leader's children when the leader is a reaper (`unshare --fork`: its child is
   * the init of the sandbox's outer pid namespace, whose death ends everything in it, and the
   * leader then reaps it and exits), else to the whole group. Harmless once it ended.
   */
  readonly kill: Effect.Effect<void>
  /** SIGKILL to the whole process group. */
  readonly killGroup: Effect.Effect<void>
  /** The leader's pid on the host (undefined when it could not be spawned). */
  readonly pid: number | undefined
  /** With `channel`: what the service writes to the program (`input`, the first fd) and reads from it (`output`). */
  readonly channel: { readonly input: Writable; readonly output: Readable } | undefined
}

class Capture {
  private readonly chunks: Array<Buffer> = []
  private kept = 0
  dropped = false
  private readonly cap: number
  constructor(cap: number) {
    this.cap = cap
  }
  push(chunk: Buffer): void {
    const room = this.cap - this.kept
    if (chunk.length > room) this.dropped = true
    if (room <= 0) return
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk
    this.chunks.push(part)
    this.kept += part.length
  }
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8")
  }
}

// Silent on failure: the one error kill(2) gives here is ESRCH, the process is gone already (what we wanted).
const signal = (target: number) =>
  Effect.ignore(Effect.try({ try: () => process.kill(target, "SIGKILL"), catch: () => undefined }))

/** The direct children of a process (Linux /proc; empty when unknown). */
const childrenOf = (pid: number): ReadonlyArray<number> =>
  Result.getOrElse(
    Result.try(() =>
      readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((p) => p !== "").map(Number)
    ),
    () => []
  )

export const start = (spec: ProcessSpec): Effect.Effect<Running> =>
  Effect.sync(() => {
    const done = Deferred.makeUnsafe<Finished>()
    const stdout = new Capture(spec.outputBytes)
    const stderr = new Capture(spec.outputBytes)
    let status = ""
    const inputs = spec.inputs ?? []
    const child = spawn(spec.file, [...spec.args], {
      env: spec.env,
      detached: true,
      stdio: [
        spec.stdin === undefined ? "ignore" : "pipe",
        "pipe",
        "pipe",
        "pipe",
        ...inputs.map(() => "pipe" as const),
        ...(spec.channel === true ? ["pipe" as const, "pipe" as const] : [])
      ]
    })
    const finish = (finished: Finished) => Deferred.doneUnsafe(done, Effect.succeed(finished))
    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk))
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk))
    child.stdio[3]?.on("data", (chunk: Buffer) => {
      status += chunk.toString("utf8")
    })
    child.stdin?.on("error", () => undefined) // the command may exit without reading its input
    child.stdin?.end(spec.stdin)
    inputs.forEach((bytes, i) => {
      const stream = child.stdio.at(4 + i)
      if (stream instanceof Writable) {
        stream.on("error", () => undefined) // a process that failed to start reads nothing
        stream.end(bytes)
      }
    })
    child.on(
      "error",
      (error) => finish({ exitCode: 127, stdout: "", stderr: "", truncated: false, status, spawnError: error.message })
    )
    child.on("close", (code, signal) =>
      finish({
        exitCode: code ?? 128 + (signal === null ? 0 : constants.signals[signal]),
        stdout: stdout.text(),
        stderr: stderr.text(),
        truncated: stdout.dropped || stderr.dropped,
        status,
        spawnError: undefined
      }))
    const pid = child.pid
    const toProgram = spec.channel === true ? child.stdio.at(4 + inputs.length) : undefined
    const fromProgram = spec.channel === true ? child.stdio.at(5 + inputs.length) : undefined
    const channel = toProgram instanceof Writable && fromProgram instanceof Readable
      ? { input: toProgram, output: fromProgram }
      : undefined
    channel?.input.on("error", () => undefined) // the program may end while the service writes
    // Only while the leader is not reaped: after that its pid, and so the group id, may be reused.
    const alive = () => pid !== undefined && child.exitCode === null && child.signalCode === null
    const signalGroup = () => (alive() ? signal(-(pid ?? 0)) : Effect.void)
    return {
      wait: Deferred.await(done),
      kill: Effect.suspend(() => {
        if (!alive()) return Effect.void
        const children = spec.reaper ? childrenOf(pid ?? 0) : []
        return children.length === 0
          ? signalGroup()
          : Effect.forEach(children, (child) => signal(child), { discard: true })
      }),
      killGroup: Effect.suspend(signalGroup),
      pid,
      channel
    }
  })

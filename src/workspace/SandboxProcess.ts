/**
 * One sandboxed process seen from the host: spawned as the workspace's uid in
 * its own process group, stdout and stderr kept up to a cap each (the rest is
 * read and dropped so the process never blocks on a full pipe), and a kill
 * that reaches everything it started (bwrap's `--die-with-parent` tears the
 * pid namespace down with it).
 */
import { spawn } from "node:child_process"
import { Deferred, Effect } from "effect"

export interface ProcessSpec {
  readonly file: string
  readonly args: ReadonlyArray<string>
  /** Host identity to run as; omitted: the service's own. */
  readonly uid: number | undefined
  readonly gid: number | undefined
  /** The whole environment of the process (nothing of the service's is inherited). */
  readonly env: Readonly<Record<string, string>>
  readonly stdin: string | undefined
  /** Bytes kept of stdout and of stderr each. */
  readonly outputBytes: number
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
  /** SIGKILL to the process group; harmless once it ended. */
  readonly kill: Effect.Effect<void>
}

const signalNumbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15, SIGXCPU: 24, SIGXFSZ: 25 }

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

export const start = (spec: ProcessSpec): Effect.Effect<Running> =>
  Effect.sync(() => {
    const done = Deferred.makeUnsafe<Finished>()
    const stdout = new Capture(spec.outputBytes)
    const stderr = new Capture(spec.outputBytes)
    let status = ""
    const child = spawn(spec.file, [...spec.args], {
      env: spec.env,
      ...(spec.uid === undefined ? {} : { uid: spec.uid }),
      ...(spec.gid === undefined ? {} : { gid: spec.gid }),
      detached: true,
      stdio: [spec.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe", "pipe"]
    })
    const finish = (finished: Finished) => Deferred.doneUnsafe(done, Effect.succeed(finished))
    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk))
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk))
    child.stdio[3]?.on("data", (chunk: Buffer) => {
      status += chunk.toString("utf8")
    })
    child.stdin?.on("error", () => undefined) // the command may exit without reading its input
    child.stdin?.end(spec.stdin)
    child.on("error", (error) =>
      finish({ exitCode: 127, stdout: "", stderr: "", truncated: false, status, spawnError: error.message })
    )
    child.on("close", (code, signal) =>
      finish({
        exitCode: code ?? 128 + (signal === null ? 0 : (signalNumbers[signal] ?? 0)),
        stdout: stdout.text(),
        stderr: stderr.text(),
        truncated: stdout.dropped || stderr.dropped,
        status,
        spawnError: undefined
      })
    )
    const pid = child.pid
    return {
      wait: Deferred.await(done),
      kill: Effect.sync(() => {
        child.kill("SIGKILL")
      }).pipe(
        Effect.andThen(pid === undefined ? Effect.void : Effect.ignore(Effect.try({ try: () => process.kill(-pid, "SIGKILL"), catch: () => undefined })))
      )
    }
  })

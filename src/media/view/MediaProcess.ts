/**
 * The host programs view_media renders with (poppler's pdfinfo and pdftoppm,
 * ffprobe and ffmpeg), each a child process bounded in time and killed when
 * its call is interrupted, working in a temporary directory removed after
 * use. A host without the program answers `media_runtime_unavailable` for
 * that kind of media, at call time (nothing is checked at start).
 */
import { Data, Duration, Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { viewLimits } from "./ViewLimits.ts"

/** A view that could not be made, with the code the model reads. */
export class MediaFailed extends Data.TaggedError("MediaFailed")<{
  readonly code: string
  readonly message: string
}> {}

/** The package that brings each program (named in the error). */
const packageOf: Readonly<Record<string, string>> = {
  pdfinfo: "poppler-utils",
  pdftoppm: "poppler-utils",
  ffprobe: "ffmpeg",
  ffmpeg: "ffmpeg"
}

/** `command args` to its end: its stdout, or the failure it ended with. */
export const exec = (command: string, args: ReadonlyArray<string>, what: string): Effect.Effect<string, MediaFailed> =>
  Effect.callback<string, MediaFailed>((resume) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    child.on("error", (error: NodeJS.ErrnoException) =>
      resume(Effect.fail(
        error.code === "ENOENT"
          ? new MediaFailed({
            code: "media_runtime_unavailable",
            message: `This deployment cannot view ${what}: ${command} (${
              packageOf[command] ?? command
            }) is not installed on the host.`
          })
          : new MediaFailed({ code: "media_unreadable", message: `${command} failed: ${error.message}` })
      )))
    child.on("close", (status) =>
      resume(
        status === 0
          ? Effect.succeed(Buffer.concat(out).toString("utf8"))
          : Effect.fail(
            new MediaFailed({
              code: "media_unreadable",
              message: `The ${what} could not be read: ${
                Buffer.concat(err).toString("utf8").trim().split("\n").slice(-3).join(" ") || `exit ${status}`
              }`
            })
          )
      ))
    return Effect.sync(() => child.kill("SIGKILL"))
  }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(viewLimits.processTimeoutMs),
      orElse: () =>
        Effect.fail(
          new MediaFailed({
            code: "media_unreadable",
            message: `${command} did not finish reading the ${what} within ${viewLimits.processTimeoutMs} ms.`
          })
        )
    })
  )

export interface WorkDir {
  readonly path: (name: string) => string
  readonly write: (name: string, bytes: Uint8Array) => Effect.Effect<string>
  /** The files whose names start with `prefix`, in name order. */
  readonly readAll: (prefix: string) => Effect.Effect<ReadonlyArray<Uint8Array>>
}

/** The files `prefix` names in `names`, in name order. */
const matching = (names: ReadonlyArray<string>, prefix: string) => names.filter((n) => n.startsWith(prefix)).sort()

/** `use` with a fresh temporary directory, removed afterwards whatever happened. */
export const withWorkDir = <A, E>(use: (dir: WorkDir) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.acquireUseRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "svc-media-"))),
    (root) =>
      use({
        path: (name) => join(root, name),
        write: (name, bytes) => Effect.promise(() => writeFile(join(root, name), bytes).then(() => join(root, name))),
        readAll: (prefix) =>
          Effect.promise(async () => {
            const names = matching(await readdir(root), prefix)
            return Promise.all(names.map((n) => readFile(join(root, n))))
          })
      }),
    (root) => Effect.promise(() => rm(root, { recursive: true, force: true }))
  )

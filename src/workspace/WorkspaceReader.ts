/**
 * Reads a workspace's local copy from the host, for the API's file browser
 * (`GET /v1/threads/:id/workspace/files`), without starting its sandbox.
 *
 * The directory is writable by the workspace's commands, so the service
 * (root, in production) must never follow a link they planted, nor be
 * raced into one (a directory swapped for a link between a check and its
 * use). So a path is walked one component at a time, each opened with
 * O_NOFOLLOW below the descriptor of its parent (through
 * `/proc/self/fd/<fd>/<name>`, which is `openat` for Node): no symbolic link
 * is ever followed, anywhere in the path, and what is read is what was
 * opened. A link shows in a listing as `symlink`; reading one, or going
 * through one, is refused (`Symlink`). A file is opened non-blocking and
 * read only when it is a regular file (a FIFO cannot hold the request).
 */
import { Data, Effect } from "effect"
import { constants, type ReadStream } from "node:fs"
import { type FileHandle, lstat, open, readdir } from "node:fs/promises"

export interface Entry {
  readonly name: string
  readonly type: "file" | "directory" | "symlink" | "other"
  readonly size: number
  readonly modifiedAt: string
}

/** Why a path cannot be read as asked; `at` is the relative path of the component that failed. */
export class ReadRefused extends Data.TaggedError("ReadRefused")<{
  readonly reason: "not_found" | "symlink" | "not_directory" | "not_file" | "unreadable"
  readonly at: string
}> {}

const fdPath = (handle: FileHandle, name?: string) =>
  name === undefined ? `/proc/self/fd/${handle.fd}` : `/proc/self/fd/${handle.fd}/${name}`

const refusal = (error: unknown, at: string): ReadRefused => {
  const code = error instanceof Error && "code" in error ? error.code : undefined
  // O_NOFOLLOW on a link: ELOOP; O_DIRECTORY on a link or a file: ENOTDIR (lstat tells which).
  if (code === "ENOENT") return new ReadRefused({ reason: "not_found", at })
  if (code === "ELOOP") return new ReadRefused({ reason: "symlink", at })
  if (code === "ENOTDIR") return new ReadRefused({ reason: "not_directory", at })
  return new ReadRefused({ reason: "unreadable", at })
}

const typeOf = (stats: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): Entry["type"] =>
  stats.isSymbolicLink() ? "symlink" : stats.isDirectory() ? "directory" : stats.isFile() ? "file" : "other"

/** Opens `components` (already checked lexically: no `.`, `..` or empty names) below `root`, never through a link. */
const walk = async (root: string, components: ReadonlyArray<string>, last: "directory" | "file") => {
  const directory = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
  let handle = await open(root, directory).catch((e: unknown) => Promise.reject(refusal(e, ".")))
  for (const [i, name] of components.entries()) {
    const at = components.slice(0, i + 1).join("/")
    const final = i === components.length - 1
    const flags = final && last === "file"
      ? constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
      : directory
    const parent = handle
    const next = await open(fdPath(parent, name), flags).catch(async (e: unknown) => {
      // ENOTDIR also answers a link opened with O_DIRECTORY: say which it is.
      const kind = await lstat(fdPath(parent, name)).then(typeOf, () => undefined)
      return Promise.reject(kind === "symlink" ? new ReadRefused({ reason: "symlink", at }) : refusal(e, at))
    }).finally(() => parent.close())
    handle = next
  }
  return handle
}

const asRefused = (error: unknown) =>
  error instanceof ReadRefused ? error : new ReadRefused({ reason: "unreadable", at: "." })

/** The entries of a directory (every one, sorted by name); links are listed, not followed. */
export const list = (root: string, components: ReadonlyArray<string>): Effect.Effect<Array<Entry>, ReadRefused> =>
  Effect.tryPromise({
    try: async () => {
      const handle = await walk(root, components, "directory")
      try {
        const names = (await readdir(fdPath(handle))).sort()
        const entries: Array<Entry> = []
        for (const name of names) {
          // Gone between the listing and its lstat: not listed.
          const stats = await lstat(fdPath(handle, name)).catch(() => undefined)
          if (stats === undefined) continue
          entries.push({ name, type: typeOf(stats), size: stats.size, modifiedAt: stats.mtime.toISOString() })
        }
        return entries
      } finally {
        await handle.close()
      }
    },
    catch: asRefused
  })

/** How much of a file's start is read to tell its media type (MediaSniff). */
const headBytes = 8_192

export interface OpenedFile {
  readonly size: number
  /** Its first bytes (up to 8 KiB). */
  readonly head: Uint8Array
  /** The file's first `size` bytes from the descriptor that was checked (closed when the stream ends or is destroyed). */
  readonly stream: () => ReadStream
  readonly close: Effect.Effect<void>
}

/** A regular file, opened for reading; never through a link. */
export const openFile = (root: string, components: ReadonlyArray<string>): Effect.Effect<OpenedFile, ReadRefused> =>
  Effect.tryPromise({
    try: async (): Promise<OpenedFile | ReadRefused> => {
      const handle = await walk(root, components, "file")
      const stats = await handle.stat()
      if (!stats.isFile()) {
        await handle.close()
        return new ReadRefused({ reason: stats.isDirectory() ? "not_file" : "unreadable", at: components.join("/") })
      }
      const { bytesRead, buffer } = await handle.read({ buffer: Buffer.alloc(headBytes), position: 0 })
      let taken = false
      return {
        size: stats.size,
        head: buffer.subarray(0, bytesRead),
        stream: () => {
          taken = true
          // Exactly the size announced (Content-Length), even when a command is appending to the file.
          return handle.createReadStream({ start: 0, end: Math.max(0, stats.size - 1), autoClose: true })
        },
        close: Effect.promise(() => (taken ? Promise.resolve() : handle.close()))
      }
    },
    catch: asRefused
  }).pipe(Effect.flatMap((opened) => (opened instanceof ReadRefused ? Effect.fail(opened) : Effect.succeed(opened))))

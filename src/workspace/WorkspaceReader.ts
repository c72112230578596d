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
 * is ever followed, anywhere in the path. A link shows in a listing as
 * `symlink`; reading one, or going through one, is refused (`symlink`). A
 * file is opened non-blocking and read only when its descriptor is a
 * regular file (a FIFO cannot hold the request); a download opens it again,
 * the same way, when its body is read.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { type Cause, Data, Effect, Stream } from "effect"
import { constants } from "node:fs"
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

/** Opens `path` with `flags`; a refusal says why (O_DIRECTORY on a link is ENOTDIR: lstat tells it is a link). */
const openOne = (path: string, flags: number, at: string): Promise<FileHandle> =>
  open(path, flags).catch(async (e: unknown) => {
    const kind = await lstat(path).then(typeOf, () => undefined)
    return Promise.reject(kind === "symlink" ? new ReadRefused({ reason: "symlink", at }) : refusal(e, at))
  })

/** Opens `components` (already checked lexically: no `.`, `..` or empty names) below `root`, never through a link. */
const walk = async (root: string, components: ReadonlyArray<string>, last: "directory" | "file") => {
  const directory = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
  let handle = await openOne(root, directory, ".")
  for (const [i, name] of components.entries()) {
    const final = i === components.length - 1
    const flags = final && last === "file"
      ? constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
      : directory
    const parent = handle
    handle = await openOne(fdPath(parent, name), flags, components.slice(0, i + 1).join("/")).finally(() =>
      parent.close()
    )
  }
  return handle
}

const asRefused = (error: unknown) =>
  error instanceof ReadRefused ? error : new ReadRefused({ reason: "unreadable", at: "." })

/**
 * A page of a directory's entries, sorted by name: up to `limit` after the name `after`; links are
 * listed, not followed. Only the page's entries are looked at (a large directory costs its names).
 */
export const list = (
  root: string,
  components: ReadonlyArray<string>,
  page: { readonly after: string | undefined; readonly limit: number }
): Effect.Effect<{ readonly entries: Array<Entry>; readonly hasMore: boolean }, ReadRefused> =>
  Effect.tryPromise({
    try: async () => {
      const handle = await walk(root, components, "directory")
      try {
        const names = (await readdir(fdPath(handle))).sort()
        const rest = page.after === undefined ? names : names.filter((name) => name > (page.after ?? ""))
        const entries: Array<Entry> = []
        let i = 0
        for (; i < rest.length && entries.length < page.limit; i++) {
          const name = rest[i] ?? ""
          // Gone between the listing and its lstat: not listed.
          const stats = await lstat(fdPath(handle, name)).catch(() => undefined)
          if (stats === undefined) continue
          entries.push({ name, type: typeOf(stats), size: stats.size, modifiedAt: stats.mtime.toISOString() })
        }
        return { entries, hasMore: i < rest.length }
      } finally {
        await handle.close()
      }
    },
    catch: asRefused
  })

/** How much of a file's start is read to tell its media type (MediaSniff). */
const headBytes = 8_192

/** A regular file's descriptor, or why the path is not one; never through a link. */
const openRegular = async (root: string, components: ReadonlyArray<string>): Promise<FileHandle | ReadRefused> => {
  const handle = await walk(root, components, "file")
  const stats = await handle.stat()
  if (stats.isFile()) return handle
  await handle.close()
  return new ReadRefused({ reason: stats.isDirectory() ? "not_file" : "unreadable", at: components.join("/") })
}

const regular = (root: string, components: ReadonlyArray<string>) =>
  Effect.tryPromise({ try: () => openRegular(root, components), catch: asRefused }).pipe(
    Effect.flatMap((opened) => (opened instanceof ReadRefused ? Effect.fail(opened) : Effect.succeed(opened)))
  )

export interface FileHead {
  readonly size: number
  /** Its first bytes (up to 8 KiB). */
  readonly head: Uint8Array
}

/** A regular file's size and first bytes (the file is closed again). */
export const inspect = (root: string, components: ReadonlyArray<string>): Effect.Effect<FileHead, ReadRefused> =>
  Effect.acquireUseRelease(
    regular(root, components),
    (handle) =>
      Effect.tryPromise({
        try: async () => {
          const stats = await handle.stat()
          const { bytesRead, buffer } = await handle.read({ buffer: Buffer.alloc(headBytes), position: 0 })
          return { size: stats.size, head: buffer.subarray(0, bytesRead) }
        },
        catch: asRefused
      }),
    (handle) => Effect.promise(() => handle.close())
  )

/**
 * The file's first `size` bytes (what `inspect` announced, even while a command appends to it),
 * opened again the same way when the stream runs and closed when it ends, fails or is interrupted:
 * a download never read holds no descriptor.
 */
export const read = (root: string, components: ReadonlyArray<string>, size: number): Stream.Stream<
  Uint8Array,
  ReadRefused | Cause.UnknownError
> =>
  size === 0 ? Stream.empty : Stream.unwrap(
    Effect.map(
      Effect.acquireRelease(regular(root, components), (handle) => Effect.promise(() => handle.close())),
      (handle) =>
        NodeStream.fromReadable({
          evaluate: () => handle.createReadStream({ start: 0, end: size - 1, autoClose: false })
        })
    )
  )

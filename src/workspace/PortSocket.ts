/**
 * The sockets of service ports, seen from the host: `<ports dir>/<port>.sock`
 * in a directory the workspace's own uid writes (its sandboxes make the
 * sockets there). Whatever the sandbox put there is untrusted: the service
 * never follows a link in it (a workspace could otherwise point a "port" at
 * any unix socket of the host, which the service, as root, could connect
 * to). A socket is opened with O_PATH | O_NOFOLLOW, checked to be a socket
 * owned by the directory's owner (the workspace's uid), and connected through
 * `/proc/self/fd/<fd>`, so what was checked is what is connected to.
 */
import { Effect, Result } from "effect"
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, watch } from "node:fs"
import { join } from "node:path"

/** Linux's O_PATH (node does not export it): an fd that names a file without opening it. */
const O_PATH = 0o10000000

export const fileOf = (port: number): string => `${port}.sock`

/** The ports that have an entry in `dir` (none when it does not exist). */
export const listed = (dir: string): ReadonlyArray<number> =>
  Result.getOrElse(
    Result.try(() =>
      readdirSync(dir).flatMap((name) => {
        const match = /^([1-9][0-9]{0,4})\.sock$/.exec(name)
        const port = match === null ? 0 : Number(match[1])
        return port >= 1 && port <= 65_535 ? [port] : []
      }).sort((a, b) => a - b)
    ),
    () => []
  )

const present = (path: string): boolean => lstatSync(path, { throwIfNoEntry: false }) !== undefined

/** Completes once `dir/<port>.sock` exists (watching the directory, not polling). */
export const appeared = (dir: string, port: number): Effect.Effect<void> => {
  const path = join(dir, fileOf(port))
  return Effect.callback<void>((resume) => {
    const watcher = Result.try(() => watch(dir, () => (present(path) ? resume(Effect.void) : undefined)))
    // Checked after the watch started, so an entry made in between is not missed.
    if (present(path) || Result.isFailure(watcher)) resume(Effect.void)
    return Effect.sync(() => Result.map(watcher, (w) => w.close()))
  })
}

/**
 * The socket of `port` as a path to connect to (`/proc/self/fd/<fd>`) and the fd to close once
 * connected; undefined when there is no socket owned by the directory's owner there.
 */
export const open = (dir: string, port: number): { readonly path: string; readonly close: () => void } | undefined => {
  const owner = lstatSync(dir, { throwIfNoEntry: false })
  if (owner === undefined || !owner.isDirectory()) return undefined
  const fd = Result.getOrUndefined(Result.try(() => openSync(join(dir, fileOf(port)), O_PATH | constants.O_NOFOLLOW)))
  if (fd === undefined) return undefined
  const close = () => Result.try(() => closeSync(fd))
  const stat = Result.getOrUndefined(Result.try(() => fstatSync(fd)))
  if (stat === undefined || !stat.isSocket() || stat.uid !== owner.uid) {
    close()
    return undefined
  }
  return { path: `/proc/self/fd/${fd}`, close }
}

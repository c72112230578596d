/**
 * Paths the model gives the workspace tools: relative to the workspace root,
 * never out of it. This is the lexical check (no absolute paths, no `..` that
 * climbs out); symlinks are resolved later, inside the sandbox, where a link
 * pointing out of /workspace is refused too (see WorkspaceFiles).
 */
import { posix } from "node:path"
import { mountPoint } from "./BwrapCommand.ts"

export type Resolved = { readonly inner: string; readonly relative: string } | { readonly error: string }

/** `a/../b` -> `/workspace/b`; `""`, `.` -> `/workspace`; `/etc`, `../x`, NUL -> error. */
export const resolve = (path: string): Resolved => {
  if (path.includes("\u0000")) return { error: "the path contains a NUL character" }
  if (path.startsWith("/")) return { error: `'${path}' is absolute; give a path relative to the workspace root` }
  const relative = posix.normalize(path === "" ? "." : path).replace(/\/+$/, "")
  if (relative === ".." || relative.startsWith("../")) return { error: `'${path}' is outside the workspace` }
  return relative === "." || relative === ""
    ? { inner: mountPoint, relative: "." }
    : { inner: `${mountPoint}/${relative}`, relative }
}

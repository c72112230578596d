/**
 * A workspace's files as one archive, and back: `tar` (gzip -1) run as the
 * workspace's own uid, so the root service never reads or writes through a
 * path the sandbox could have planted a symlink in (tar archives a symlink as
 * a link, never follows it, and extracting as that uid can write nowhere the
 * workspace's commands could not). A cheap fingerprint of the tree (type,
 * mode, size, mtime and path of every entry) tells whether it changed since
 * the last snapshot without archiving it.
 */
import { Data, Effect } from "effect"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"

/** Where the files are and who owns them (undefined uid: the service's own). */
export interface Owner {
  readonly dir: string
  readonly uid: number | undefined
}

interface Finished {
  readonly code: number
  readonly stdout: Buffer
  readonly stderr: string
  /** stdout went past the cap and the process was killed. */
  readonly overflow: boolean
}

const env = { PATH: "/usr/local/bin:/usr/bin:/bin", LC_ALL: "C" }

/** Runs `file args` as the owner, stdout kept up to `maxBytes` (or only hashed), stdin from `input`. */
const run = (owner: Owner, file: string, args: ReadonlyArray<string>, options: {
  readonly maxBytes: number
  readonly input?: Uint8Array
  readonly hash?: ReturnType<typeof createHash>
}) =>
  Effect.callback<Finished>((resume) => {
    const child = spawn(file, [...args], {
      env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      ...(owner.uid === undefined ? {} : { uid: owner.uid, gid: owner.uid })
    })
    const chunks: Array<Buffer> = []
    let kept = 0
    let overflow = false
    let stderr = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      if (options.hash !== undefined) return void options.hash.update(chunk)
      kept += chunk.length
      if (kept > options.maxBytes) {
        overflow = true
        child.kill("SIGKILL")
      } else chunks.push(chunk)
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      if (stderr.length < 4_096) stderr += chunk.toString("utf8")
    })
    child.stdin?.on("error", () => undefined)
    child.stdin?.end(options.input)
    child.on("error", (error) =>
      resume(Effect.succeed({ code: 127, stdout: Buffer.alloc(0), stderr: error.message, overflow })))
    child.on("close", (code) =>
      resume(Effect.succeed({ code: code ?? 137, stdout: Buffer.concat(chunks), stderr: stderr.trim(), overflow })))
    return Effect.sync(() =>
      child.kill("SIGKILL")
    )
  })

export type Created = Data.TaggedEnum<{
  Archive: { readonly data: Buffer; readonly sha256: string }
  TooLarge: {}
  Failed: { readonly message: string }
}>
export const Created = Data.taggedEnum<Created>()

export const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex")

/** The workspace's files as a gzip'd tar of at most `maxBytes`. */
export const create = (owner: Owner, maxBytes: number): Effect.Effect<Created> =>
  Effect.map(
    // --sparse: a sparse file stays sparse (its holes are not stored, nor written out again on restore).
    run(owner, "tar", [
      "--create",
      "--file=-",
      `--directory=${owner.dir}`,
      "--numeric-owner",
      "--sparse",
      "--use-compress-program=gzip -1",
      "."
    ], { maxBytes }),
    (done): Created =>
      done.overflow
        ? Created.TooLarge()
        : done.code === 0
        ? Created.Archive({ data: done.stdout, sha256: sha256(done.stdout) })
        : Created.Failed({ message: done.stderr || `tar exited with ${done.code}` })
  )

/** Unpacks an archive into the (empty) workspace directory; the error message when tar cannot. */
export const extract = (owner: Owner, data: Uint8Array): Effect.Effect<string | undefined> =>
  Effect.map(
    run(owner, "tar", [
      "--extract",
      "--file=-",
      `--directory=${owner.dir}`,
      "--gzip",
      "--no-same-owner",
      "--delay-directory-restore"
    ], {
      maxBytes: 65_536,
      input: data
    }),
    (done) => (done.code === 0 ? undefined : done.stderr || `tar exited with ${done.code}`)
  )

/** A hash of every entry's type, mode, size, mtime and path (undefined: the tree could not be read). */
export const fingerprint = (owner: Owner): Effect.Effect<string | undefined> =>
  Effect.suspend(() => {
    const hash = createHash("sha256")
    return Effect.map(
      run(owner, "find", [owner.dir, "-mindepth", "1", "-printf", "%y %m %s %T@ %P\\0"], { maxBytes: 0, hash }),
      (done) => (done.code === 0 ? hash.digest("hex") : undefined)
    )
  })

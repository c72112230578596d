/**
 * A real git server for workspace seeds: a bare repository made with the
 * host's `git` (two commits on `main`, the first tagged `v1`), served over
 * smart HTTP by `git http-backend` run as a CGI program from a node:http
 * server on 127.0.0.1 (shallow clones and fetching a commit by name need the
 * smart protocol). The repository and the server go with the scope.
 */
import { Effect, type Scope } from "effect"
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { listen } from "./HttpPeer.ts"

const run = promisify(execFile)

export interface GitServer {
  readonly port: number
  /** `http://<host>:<port>/repo.git` */
  readonly urlAt: (host: string) => string
  /** The commits of `main`, oldest first. */
  readonly commits: ReadonlyArray<string>
  /** The README of each commit, oldest first. */
  readonly readmes: ReadonlyArray<string>
}

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  run("git", [
    "-c",
    "user.name=Seed Test",
    "-c",
    "user.email=seed@example.com",
    "-c",
    "init.defaultBranch=main",
    ...args
  ], { cwd })
    .then((r) => r.stdout.trim())

const readmes = ["first version\n", "hello from the seed\n"]

/** The bare repository `<root>/repo.git`, pushed from a scratch clone. */
const makeRepository = async (root: string): Promise<ReadonlyArray<string>> => {
  const scratch = join(root, "scratch")
  await git(root, "init", "-q", "--bare", "repo.git")
  await git(root, "init", "-q", scratch)
  const commits: Array<string> = []
  for (const [i, readme] of readmes.entries()) {
    writeFileSync(join(scratch, "README"), readme)
    writeFileSync(join(scratch, `file${i + 1}.txt`), `file ${i + 1}\n`)
    await git(scratch, "add", "-A")
    await git(scratch, "commit", "-q", "-m", `commit ${i + 1}`)
    commits.push(await git(scratch, "rev-parse", "HEAD"))
    if (i === 0) await git(scratch, "tag", "v1")
  }
  await git(scratch, "push", "-q", join(root, "repo.git"), "main", "v1")
  await git(join(root, "repo.git"), "update-server-info")
  return commits
}

/**
 * One request through `git http-backend` (CGI: request in the environment and on stdin, headers then body on stdout).
 * `pathInfo`: the repository path below `root` (default the URL's path); `receivePack` enables pushes.
 */
export const backend =
  (root: string, options: { readonly pathInfo?: string; readonly receivePack?: boolean } = {}) =>
  (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://git.local")
    const header = (name: string) => (typeof req.headers[name] === "string" ? req.headers[name] : undefined)
    const optional = (name: string, value: string | undefined) => (value === undefined ? {} : { [name]: value })
    const child = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env["PATH"] ?? "/usr/bin:/bin",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: options.pathInfo ?? url.pathname,
        ...(options.receivePack === true
          ? {
            REMOTE_USER: "svc-test",
            GIT_CONFIG_COUNT: "1",
            GIT_CONFIG_KEY_0: "http.receivepack",
            GIT_CONFIG_VALUE_0: "true"
          }
          : {}),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? "GET",
        REMOTE_ADDR: "127.0.0.1",
        CONTENT_TYPE: header("content-type") ?? "",
        ...optional("CONTENT_LENGTH", header("content-length")),
        ...optional("HTTP_CONTENT_ENCODING", header("content-encoding")),
        ...optional("GIT_PROTOCOL", header("git-protocol"))
      },
      stdio: ["pipe", "pipe", "ignore"]
    })
    req.pipe(child.stdin)
    let head = Buffer.alloc(0)
    let started = false
    child.stdout.on("data", (chunk: Buffer) => {
      if (started) return void res.write(chunk)
      head = Buffer.concat([head, chunk])
      const end = head.indexOf("\r\n\r\n")
      if (end < 0) return
      started = true
      let status = 200
      for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
        const colon = line.indexOf(":")
        const name = line.slice(0, colon).trim()
        const value = line.slice(colon + 1).trim()
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10)
        else res.setHeader(name, value)
      }
      res.writeHead(status)
      res.write(head.subarray(end + 4))
    })
    child.on("close", () => (started ? res.end() : res.writeHead(502).end()))
  }

/** The repository served on an ephemeral port. */
export const serve: Effect.Effect<GitServer, never, Scope.Scope> = Effect.gen(function*() {
  const root = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "svc-test-git-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  const commits = yield* Effect.promise(() => makeRepository(root))
  const port = yield* listen(backend(root))
  return { port, urlAt: (host) => `http://${host}:${port}/repo.git`, commits, readmes }
})

/**
 * The managed browser's process: Debian's Chromium started in the thread's
 * workspace sandbox (Sandbox.startPiped: the workspace's uid, its egress
 * proxy, its services' ports on 127.0.0.1), and Playwright connected to it
 * over the DevTools pipe (CdpPipe). Why this shape rather than running
 * `@playwright/mcp` inside the sandbox: docs/design/browser.md.
 *
 * Chromium's own sandbox is off (`--no-sandbox`): it needs user namespaces or
 * a setuid helper, and the workspace's sandbox refuses both (no nested user
 * namespaces, no_new_privs). The workspace's sandbox (namespaces,
 * seccomp, its uid, read-only system) is the browser's; a page that escaped
 * the renderer would stand where a shell command of the workspace stands.
 *
 * Its traffic: every page and subresource goes through the workspace's egress
 * proxy (`--proxy-server`), which applies the network mode and the URL policy
 * to each connection; loopback (the workspace's own services) is reached
 * directly, as a command reaches it. An offline workspace has no proxy and no
 * route out.
 */
import { Effect, Fiber, Option, Result, type Scope } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { type Browser, chromium } from "playwright-core"
import { proxyUrl } from "../workspace/BwrapCommand.ts"
import type { Sandbox, Workspace } from "../workspace/Sandbox.ts"
import { BrowserError } from "./BrowserError.ts"
import type { BrowserLimits } from "./BrowserLimits.ts"
import * as CdpPipe from "./CdpPipe.ts"

/** The browser binary (Debian's `chromium` package; /usr/bin/chromium is a wrapper script reading /etc). */
export const executable = "/usr/lib/chromium/chromium"

const switches = [
  "--headless",
  "--no-sandbox",
  "--remote-debugging-pipe",
  "--user-data-dir=/tmp/browser",
  "--disk-cache-dir=/tmp/browser-cache",
  "--disk-cache-size=33554432",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-field-trial-config",
  "--disable-background-networking",
  "--disable-background-timer-throttling",
  "--disable-backgrounding-occluded-windows",
  "--disable-back-forward-cache",
  "--disable-breakpad",
  "--disable-component-extensions-with-background-pages",
  "--disable-component-update",
  "--no-default-browser-check",
  "--disable-default-apps",
  "--disable-extensions",
  "--disable-hang-monitor",
  "--disable-ipc-flooding-protection",
  "--disable-popup-blocking",
  "--disable-prompt-on-repost",
  "--disable-renderer-backgrounding",
  "--disable-sync",
  "--force-color-profile=srgb",
  "--metrics-recording-only",
  "--no-first-run",
  "--password-store=basic",
  "--use-mock-keychain",
  "--no-service-autorun",
  "--disable-search-engine-choice-screen",
  "--enable-unsafe-swiftshader",
  "--hide-scrollbars",
  "--mute-audio"
]

/** The command run in the sandbox: the channel (fds 8, 9) becomes Chromium's pipe (fds 3, 4). */
export const commandOf = (proxied: boolean): string =>
  [
    "mkdir -p /tmp/browser /tmp/browser-cache && ",
    "HOME=/tmp/browser XDG_CONFIG_HOME=/tmp/browser XDG_CACHE_HOME=/tmp/browser-cache exec ",
    executable,
    ...switches.map((s) => ` ${s}`),
    proxied ? ` --proxy-server=${proxyUrl}` : "",
    " about:blank 3<&8 4>&9 8<&- 9>&- >/dev/null 2>&1"
  ].join("")

/** The pids of a process and every process under it (Linux /proc; the threads' children too). */
const treeOf = (pid: number): ReadonlyArray<number> => {
  const all: Array<number> = []
  const visit = (p: number) => {
    all.push(p)
    const tasks = Result.getOrElse(Result.try(() => readdirSync(`/proc/${p}/task`)), () => [])
    for (const task of tasks) {
      const children = Result.getOrElse(
        Result.try(() => readFileSync(`/proc/${p}/task/${task}/children`, "utf8")),
        () => ""
      )
      for (const child of children.trim().split(/\s+/)) if (child !== "") visit(Number(child))
    }
  }
  visit(pid)
  return all
}

/**
 * Memory of a process tree: the sum of each process's proportional set size (a page shared by n
 * processes counts 1/n to each), so the shared libraries of Chromium's many processes count once.
 */
export const residentBytes = (pid: number): number =>
  treeOf(pid).reduce((sum, p) => {
    const status = Result.getOrElse(Result.try(() => readFileSync(`/proc/${p}/smaps_rollup`, "utf8")), () => "")
    const kib = /^Pss:\s+(\d+) kB$/m.exec(status)
    return sum + (kib === null ? 0 : Number(kib[1]) * 1024)
  }, 0)

export interface Running {
  readonly browser: Browser
  /** Why the browser ended when the service ended it (a limit), else undefined. */
  readonly endedBy: () => string | undefined
  /** Ends when the browser's process does. */
  readonly ended: Effect.Effect<void>
}

/** Starts the browser in the workspace's sandbox; it is killed when the scope closes. */
export const launch = Effect.fn("BrowserProcess.launch")(function*(
  sandbox: Sandbox["Service"],
  workspace: Workspace,
  limits: BrowserLimits
): Effect.fn.Return<Running, BrowserError, Scope.Scope> {
  const process = yield* sandbox.startPiped(workspace, {
    command: commandOf(workspace.egress !== undefined),
    limits: limits.command
  }).pipe(Effect.mapError((e) => new BrowserError({ code: "browser_unavailable", message: e.message })))
  let endedBy: string | undefined
  const watch = Effect.sleep(limits.checkIntervalMs).pipe(
    Effect.andThen(Effect.sync(() => residentBytes(process.pid))),
    Effect.flatMap((bytes) => {
      if (bytes <= limits.rssBytes) return Effect.void
      endedBy = `the browser used ${Math.round(bytes / 1048576)} MiB of memory, over its limit of ${
        Math.round(limits.rssBytes / 1048576)
      } MiB, and was stopped`
      return process.kill
    }),
    Effect.forever
  )
  const watcher = yield* Effect.forkScoped(watch)
  const ended = Effect.asVoid(process.wait)
  yield* Effect.forkScoped(Effect.andThen(ended, Fiber.interrupt(watcher)))
  const browser = yield* Effect.tryPromise({
    try: () => chromium.connectOverCDP(CdpPipe.transport(process.input, process.output), { timeout: 30_000 }),
    catch: (e) => e
  }).pipe(
    Effect.timeoutOption(30_000),
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail<unknown>(new Error("it did not answer within 30 s")),
      onSome: Effect.succeed
    })),
    Effect.catch((cause) =>
      Effect.flatMap(Effect.timeoutOption(process.wait, 1_000), (done) =>
        Effect.fail(
          new BrowserError({
            code: "browser_unavailable",
            message: `the browser did not start: ${
              Option.isSome(done) && done.value.startError !== undefined
                ? done.value.startError
                : cause instanceof Error
                ? cause.message
                : String(cause)
            }`
          })
        ))
    )
  )
  yield* Effect.addFinalizer(() => Effect.promise(() => browser.close().catch(() => undefined)))
  return { browser, endedBy: () => endedBy, ended }
})

/**
 * One run's managed browser (spec 2.1.1 `browser`): started on the run's
 * first browser call (BrowserProcess.launch in the thread's workspace
 * sandbox), closed when the run's scope closes (the run ends or parks; the
 * workspace can only hibernate after that). A browser a limit ended is
 * started again by the next call, which is told so.
 *
 * Its pages live in one browser context. An authenticated profile
 * (`authenticated.profileKey`) is that context's storage state (cookies and
 * local storage), loaded when the browser starts and saved back when the
 * run's scope closes; the profile never touches the workspace's files, the
 * browser keeps it in memory. Downloads (with `files`) are saved by the browser
 * itself under `/workspace/downloads/`.
 */
import { Effect, Exit, Scope, Semaphore } from "effect"
import type { Browser, BrowserContext, FileChooser, Page } from "playwright-core"
import type { Sandbox, Workspace } from "../workspace/Sandbox.ts"
import { BrowserError } from "./BrowserError.ts"
import type { BrowserLimits } from "./BrowserLimits.ts"
import * as BrowserProcess from "./BrowserProcess.ts"

/** Playwright's storage state: `{ cookies, origins }`. */
export type StorageState = Awaited<ReturnType<BrowserContext["storageState"]>>

/** Where downloads land, relative to the workspace root. */
export const downloadsDir = "downloads"

export interface Download {
  readonly filename: string
  /** Relative to the workspace root. */
  readonly path: string
  readonly state: "completed" | "canceled"
}

export interface SessionOptions {
  readonly sandbox: Sandbox["Service"]
  readonly workspace: Workspace
  readonly limits: BrowserLimits
  /** With `files`: downloads are saved under the workspace. */
  readonly downloads: boolean
  /** The profile's storage state, loaded at start; `save` is called with the state when the run's scope closes. */
  readonly profile?: {
    readonly load: Effect.Effect<StorageState | undefined, BrowserError>
    readonly save: (state: StorageState) => Effect.Effect<void>
  }
}

interface Live {
  readonly scope: Scope.Closeable
  readonly running: BrowserProcess.Running
  readonly context: BrowserContext
  current: number
  chooser: FileChooser | undefined
  readonly downloads: Array<Download>
  readonly pendingDownloads: Set<string>
  /** Set once a profile's state was loaded: what to save back. */
  readonly profiled: boolean
}

export interface BrowserSession {
  /** The current tab, starting the browser first when needed. */
  readonly page: Effect.Effect<Page, BrowserError>
  readonly tabs: Effect.Effect<{ readonly pages: ReadonlyArray<Page>; readonly current: number }, BrowserError>
  readonly newTab: Effect.Effect<Page, BrowserError>
  readonly selectTab: (index: number) => Effect.Effect<Page, BrowserError>
  readonly closeTab: (index: number) => Effect.Effect<void, BrowserError>
  /** The file chooser a click opened and no upload answered yet. */
  readonly takeChooser: Effect.Effect<FileChooser | undefined>
  /** Downloads finished since the last call (waits a moment for ones in progress). */
  readonly takeDownloads: Effect.Effect<ReadonlyArray<Download>>
  /** Why the browser ended when a limit ended it (the next call starts a new one); read once. */
  readonly endedBy: Effect.Effect<string | undefined>
  /** Why the live browser was ended by a limit, if it was (a call that failed because of it says so). */
  readonly limitEnded: Effect.Effect<string | undefined>
}

const attempt = <A>(what: string, f: () => Promise<A>): Effect.Effect<A, BrowserError> =>
  Effect.tryPromise({
    try: f,
    catch: (e) =>
      new BrowserError({ code: "browser_error", message: `${what}: ${e instanceof Error ? e.message : String(e)}` })
  })

/** A run's browser; everything it started is closed (and the profile saved) when the scope closes. */
export const make = Effect.fn("BrowserSession.make")(function*(options: SessionOptions) {
  const lock = Semaphore.makeUnsafe(1)
  let live: Live | undefined
  let lastEnd: string | undefined

  const watchPage = (state: Live, page: Page) => {
    page.on("filechooser", (chooser) => {
      state.chooser = chooser
    })
    page.setDefaultTimeout(options.limits.actionTimeoutMs)
    page.setDefaultNavigationTimeout(options.limits.actionTimeoutMs)
  }

  /** With `files`: the browser saves downloads under /workspace/downloads, reporting them here. */
  const acceptDownloads = (state: Live, browser: Browser, page: Page) =>
    Effect.gen(function*() {
      const target = yield* attempt("the browser's downloads", () => state.context.newCDPSession(page))
      const info = yield* attempt("the browser's downloads", () => target.send("Target.getTargetInfo"))
      const session = yield* attempt("the browser's downloads", () => browser.newBrowserCDPSession())
      const names = new Map<string, string>()
      session.on("Browser.downloadWillBegin", (event) => {
        names.set(event.guid, event.suggestedFilename)
        state.pendingDownloads.add(event.guid)
      })
      session.on("Browser.downloadProgress", (event) => {
        if (event.state === "inProgress") return
        state.pendingDownloads.delete(event.guid)
        const filename = names.get(event.guid) ?? event.guid
        state.downloads.push({ filename, path: `${downloadsDir}/${filename}`, state: event.state })
      })
      yield* attempt("the browser's downloads", () =>
        session.send("Browser.setDownloadBehavior", {
          behavior: "allow",
          ...(info.targetInfo.browserContextId === undefined
            ? {}
            : { browserContextId: info.targetInfo.browserContextId }),
          downloadPath: `/workspace/${downloadsDir}`,
          eventsEnabled: true
        }))
    })

  const start = Effect.gen(function*() {
    const scope = yield* Scope.make()
    const started = Effect.gen(function*() {
      const running = yield* BrowserProcess.launch(options.sandbox, options.workspace, options.limits)
      const storageState = options.profile === undefined ? undefined : yield* options.profile.load
      const context = yield* attempt(
        "the browser's context",
        () =>
          running.browser.newContext({
            viewport: { width: 1280, height: 720 },
            acceptDownloads: false,
            ...(storageState === undefined ? {} : { storageState })
          })
      )
      const state: Live = {
        scope,
        running,
        context,
        current: 0,
        chooser: undefined,
        downloads: [],
        pendingDownloads: new Set(),
        profiled: options.profile !== undefined
      }
      context.on("page", (page) => watchPage(state, page))
      const page = yield* attempt("the browser's first tab", () => context.newPage())
      if (options.downloads) yield* acceptDownloads(state, running.browser, page)
      return state
    }).pipe(Scope.provide(scope))
    return yield* started.pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
  })

  /** Saves the profile (when there is one) and closes the browser. */
  const stop = (state: Live) =>
    Effect.gen(function*() {
      if (state.profiled && options.profile !== undefined && state.running.browser.isConnected()) {
        const saved = yield* Effect.option(attempt("the profile", () => state.context.storageState()))
        if (saved._tag === "Some") yield* options.profile.save(saved.value)
      }
      yield* Scope.close(state.scope, Exit.void)
    })

  yield* Effect.addFinalizer(() => Effect.suspend(() => (live === undefined ? Effect.void : stop(live))))

  /** The live browser, started (again) when there is none or it ended. */
  const ensure: Effect.Effect<Live, BrowserError> = lock.withPermits(1)(Effect.gen(function*() {
    if (live !== undefined && live.running.browser.isConnected()) return live
    if (live !== undefined) {
      lastEnd = live.running.endedBy() ?? "the browser ended"
      yield* Scope.close(live.scope, Exit.void)
      live = undefined
    }
    live = yield* start
    return live
  }))

  const pagesOf = (state: Live) => state.context.pages()

  const current = (state: Live): Effect.Effect<Page, BrowserError> =>
    Effect.suspend(() => {
      const pages = pagesOf(state)
      if (pages.length === 0) return attempt("a new tab", () => state.context.newPage())
      state.current = Math.min(state.current, pages.length - 1)
      return Effect.succeed(pages[state.current])
    })

  const indexChecked = (state: Live, index: number) =>
    index >= 0 && index < pagesOf(state).length
      ? Effect.succeed(index)
      : Effect.fail(
        new BrowserError({
          code: "browser_error",
          message: `there is no tab ${index}; the tabs are 0 to ${pagesOf(state).length - 1}`
        })
      )

  const session: BrowserSession = {
    page: Effect.flatMap(ensure, current),
    tabs: Effect.map(ensure, (state) => ({ pages: pagesOf(state), current: state.current })),
    newTab: Effect.flatMap(
      ensure,
      (state) =>
        Effect.tap(attempt("a new tab", () => state.context.newPage()), () =>
          Effect.sync(() => {
            state.current = pagesOf(state).length - 1
          }))
    ),
    selectTab: (index) =>
      Effect.flatMap(ensure, (state) =>
        Effect.flatMap(indexChecked(state, index), (i) => {
          state.current = i
          const page = pagesOf(state)[i]
          return Effect.as(attempt("selecting the tab", () => page.bringToFront()), page)
        })),
    closeTab: (index) =>
      Effect.flatMap(
        ensure,
        (state) =>
          Effect.flatMap(indexChecked(state, index), (i) =>
            Effect.tap(
              attempt("closing the tab", () => pagesOf(state)[i].close()),
              () =>
                Effect.sync(() => {
                  state.current = Math.max(0, state.current >= i ? state.current - 1 : state.current)
                })
            ))
      ),
    takeChooser: Effect.sync(() => {
      const chooser = live?.chooser
      if (live !== undefined) live.chooser = undefined
      return chooser
    }),
    takeDownloads: Effect.gen(function*() {
      const state = live
      if (state === undefined) return []
      // A download the action started finishes on its own time: wait for it a little (polled, at most 10 s).
      for (let i = 0; i < 100 && state.pendingDownloads.size > 0; i++) yield* Effect.sleep(100)
      return state.downloads.splice(0, state.downloads.length)
    }),
    limitEnded: Effect.sync(() => live?.running.endedBy()),
    endedBy: Effect.sync(() => {
      const ended = lastEnd
      lastEnd = undefined
      return ended
    })
  }
  return session
})

/**
 * A real headless browser for the console's tests: Debian's Chromium
 * (`/usr/bin/chromium`, installed by .ci/setup-system) driven by
 * playwright-core, one browser per test, closed with the test's scope.
 * It records what the page reported as errors (exceptions, console errors:
 * a Content-Security-Policy violation is one; not Chromium's notes of HTTP
 * error statuses, which the console shows the reader) and saves screenshots under
 * `test-artifacts/console/`.
 */
import { Effect, type Scope } from "effect"
import { mkdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"

export const executablePath = "/usr/bin/chromium"

/** Where the screenshots go (gitignored). */
export const artifactsDir = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url))

export interface BrowserPage {
  readonly page: Page
  /** What the page reported as errors so far. */
  readonly errors: () => ReadonlyArray<string>
  /** Saves a full-page screenshot as `<name>.png` in the artifacts folder. */
  readonly screenshot: (name: string) => Effect.Effect<void>
}

/** A fresh Chromium with one page, closed when the scope closes. */
export const open: Effect.Effect<BrowserPage, never, Scope.Scope> = Effect.gen(function*() {
  const browser: Browser = yield* Effect.acquireRelease(
    // As root Chromium needs --no-sandbox; the tests only load the service's own pages.
    Effect.promise(() => chromium.launch({ executablePath, args: ["--no-sandbox"] })),
    (browser) => Effect.promise(() => browser.close())
  )
  const page = yield* Effect.promise(() => browser.newPage({ viewport: { width: 1400, height: 900 } }))
  // Below the test's own timeout, so a step that waits in vain says which one.
  page.setDefaultTimeout(20_000)
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`))
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      errors.push(`console error: ${message.text()}`)
    }
  })
  mkdirSync(artifactsDir, { recursive: true })
  return {
    page,
    errors: () => [...errors],
    screenshot: (name) =>
      Effect.promise(() => page.screenshot({ path: `${artifactsDir}${name}.png`, fullPage: true })).pipe(Effect.asVoid)
  }
})

/** Runs the steps on the page (Playwright's own waits are conditions on the page, never fixed delays). */
export const on = <A>(browser: BrowserPage, steps: (page: Page) => Promise<A>): Effect.Effect<A> =>
  Effect.promise(() => steps(browser.page))

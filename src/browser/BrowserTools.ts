/**
 * The managed browser's tools (spec 2.1.1 `browser`), named and shaped after
 * Microsoft's Playwright MCP server so its users know them. The model reads a
 * page through its accessibility snapshot (`browser_snapshot`, and after each
 * action): the tree with element refs (`[ref=e5]`) that the actions take.
 * Everything a page says is third-party text: results are fenced as untrusted.
 */
import { Effect, Schema } from "effect"
import type { Page } from "playwright-core"
import * as ToolDef from "../tools/ToolDef.ts"
import { Flag, NonEmpty, NonEmptyList, OneOf, optional, Text } from "../tools/ToolInput.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import type { BrowserCall } from "./BrowserCall.ts"
import { deliverDownloads, deliverScreenshot } from "./BrowserDeliveries.ts"
import { BrowserError } from "./BrowserError.ts"
import { destinationRefusal } from "./BrowserPolicy.ts"

const attempt = <A>(what: string, f: () => Promise<A>): Effect.Effect<A, BrowserError> =>
  Effect.tryPromise({
    try: f,
    catch: (e) =>
      new BrowserError({
        code: "browser_error",
        message: `${what}: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]}`
      })
  })

/** The element a ref of the last snapshot names. */
const element = (page: Page, ref: string) => page.locator(`aria-ref=${ref}`)

const Ref = NonEmpty("The element's ref in the last page snapshot, e.g. e5.")

/** What the model reads after an action: where the tab is, the downloads it caused and the page's snapshot. */
export const pageState = (ctx: BrowserCall, page: Page, extra: Readonly<Record<string, unknown>> = {}) =>
  Effect.gen(function*() {
    const restarted = yield* ctx.session.endedBy
    const snapshot = yield* attempt("reading the page", () => page.ariaSnapshot({ mode: "ai" }))
    const title = yield* attempt("reading the page", () => page.title())
    const downloads = yield* deliverDownloads(ctx, yield* ctx.session.takeDownloads)
    const output = {
      ...extra,
      url: page.url(),
      title,
      ...(downloads.length === 0 ? {} : { downloads }),
      ...(restarted === undefined ? {} : { restarted: `the browser was started again: ${restarted}` }),
      snapshot
    }
    const lines = [
      ...(restarted === undefined
        ? []
        : [`Note: the browser was started again (${restarted}); earlier tabs are gone.`]),
      ...Object.entries(extra).map(([key, value]) => `${key}: ${JSON.stringify(value)}`),
      `Page URL: ${output.url}`,
      `Page title: ${title}`,
      ...downloads.map((d) =>
        `Download ${d.state}: ${d.filename} at ${d.path}${
          "artifact" in d ? ` (artifact: ${JSON.stringify(d.artifact)})` : ""
        }`
      ),
      "Page snapshot:",
      snapshot
    ]
    return ToolOutcome.success(output, lines.join("\n"))
  })

/** An action on the current tab, answered with the page's state. */
const act = (ctx: BrowserCall, what: string, action: (page: Page) => Promise<unknown>) =>
  Effect.flatMap(ctx.session.page, (page) => Effect.andThen(attempt(what, () => action(page)), pageState(ctx, page)))

export const browserNavigate = ToolDef.make({
  name: "browser_navigate",
  description: "Navigate the current tab to a URL (http or https). Answers the page's snapshot.",
  input: Schema.Struct({ url: NonEmpty("The URL to navigate to.") }),
  untrusted: true,
  handler: ({ url }, ctx: BrowserCall) =>
    Effect.gen(function*() {
      const refused = destinationRefusal(ctx.rules, url)
      if (refused !== undefined) return ToolOutcome.failure("browser_refused", refused)
      return yield* act(ctx, `navigating to ${url}`, (page) => page.goto(url, { waitUntil: "domcontentloaded" }))
    })
})

export const browserNavigateBack = ToolDef.make({
  name: "browser_navigate_back",
  description: "Go back to the previous page of the current tab.",
  input: Schema.Struct({}),
  untrusted: true,
  handler: (_: {}, ctx: BrowserCall) => act(ctx, "going back", (page) => page.goBack({ waitUntil: "domcontentloaded" }))
})

export const browserSnapshot = ToolDef.make({
  name: "browser_snapshot",
  description:
    "Read the current tab: its accessibility snapshot, each element with a ref (e.g. [ref=e5]) the other tools take. " +
    "Better than a screenshot for acting on the page.",
  input: Schema.Struct({}),
  untrusted: true,
  handler: (_: {}, ctx: BrowserCall) => Effect.flatMap(ctx.session.page, (page) => pageState(ctx, page))
})

export const browserClick = ToolDef.make({
  name: "browser_click",
  description: "Click an element of the current tab, named by its ref in the last snapshot.",
  input: Schema.Struct({ ref: Ref, doubleClick: optional(Flag("Double-click instead.")) }),
  untrusted: true,
  handler: ({ ref, doubleClick }, ctx: BrowserCall) =>
    act(
      ctx,
      `clicking ${ref}`,
      (page) => doubleClick === true ? element(page, ref).dblclick() : element(page, ref).click()
    )
})

export const browserType = ToolDef.make({
  name: "browser_type",
  description: "Type text into an editable element (replacing its content), optionally pressing Enter after.",
  input: Schema.Struct({
    ref: Ref,
    text: Text("The text to type."),
    submit: optional(Flag("Press Enter after typing."))
  }),
  untrusted: true,
  handler: ({ ref, submit, text }, ctx: BrowserCall) =>
    act(ctx, `typing into ${ref}`, async (page) => {
      await element(page, ref).fill(text)
      if (submit === true) await element(page, ref).press("Enter")
    })
})

export const browserPressKey = ToolDef.make({
  name: "browser_press_key",
  description: "Press a key on the keyboard in the current tab, e.g. Enter, ArrowLeft, Tab, a.",
  input: Schema.Struct({ key: NonEmpty("The key's name (Playwright's names: Enter, ArrowDown, Control+a, ...).") }),
  untrusted: true,
  handler: ({ key }, ctx: BrowserCall) => act(ctx, `pressing ${key}`, (page) => page.keyboard.press(key))
})

export const browserSelectOption = ToolDef.make({
  name: "browser_select_option",
  description: "Select options of a dropdown (a select element), by value or label.",
  input: Schema.Struct({ ref: Ref, values: NonEmptyList("The values or labels to select.") }),
  untrusted: true,
  handler: ({ ref, values }, ctx: BrowserCall) =>
    act(ctx, `selecting in ${ref}`, (page) => element(page, ref).selectOption([...values]))
})

export const browserHover = ToolDef.make({
  name: "browser_hover",
  description: "Hover the mouse over an element of the current tab.",
  input: Schema.Struct({ ref: Ref }),
  untrusted: true,
  handler: ({ ref }, ctx: BrowserCall) => act(ctx, `hovering ${ref}`, (page) => element(page, ref).hover())
})

export const browserWaitFor = ToolDef.make({
  name: "browser_wait_for",
  description: "Wait for text to appear or disappear in the current tab, or for a number of seconds.",
  input: Schema.Struct({
    text: optional(NonEmpty("Text to wait for.")),
    textGone: optional(NonEmpty("Text to wait to disappear.")),
    time: optional(
      Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(30)).annotate({
        description: "Seconds to wait (at most 30)."
      })
    )
  }),
  untrusted: true,
  handler: ({ text, textGone, time }, ctx: BrowserCall) =>
    Effect.gen(function*() {
      if (text === undefined && textGone === undefined && time === undefined) {
        return ToolOutcome.failure(
          "invalid_tool_input",
          "Invalid input for browser_wait_for: give text, textGone or time"
        )
      }
      const page = yield* ctx.session.page
      if (time !== undefined) yield* Effect.sleep(Math.round(time * 1000))
      if (text !== undefined) {
        yield* attempt(`waiting for "${text}"`, () => page.getByText(text).first().waitFor({ state: "visible" }))
      }
      if (textGone !== undefined) {
        yield* attempt(`waiting for "${textGone}" to go`, () =>
          page.getByText(textGone).first().waitFor({ state: "hidden" }))
      }
      return yield* pageState(ctx, page)
    })
})

export const browserTakeScreenshot = ToolDef.make({
  name: "browser_take_screenshot",
  description:
    "Take a PNG screenshot of the current tab (or of one element, or the full page). It is shown to you as an image " +
    "and stored as an artifact. To act on the page, use browser_snapshot instead.",
  input: Schema.Struct({
    fullPage: optional(Flag("The whole scrollable page instead of the viewport.")),
    ref: optional(NonEmpty("An element's ref: only that element."))
  }),
  handler: ({ fullPage, ref }, ctx: BrowserCall) =>
    Effect.gen(function*() {
      const page = yield* ctx.session.page
      const png = yield* attempt("taking the screenshot", () =>
        ref === undefined
          ? page.screenshot({ type: "png", fullPage: fullPage === true })
          : element(page, ref).screenshot({ type: "png" }))
      return yield* deliverScreenshot(ctx, new Uint8Array(png), page.url())
    })
})

export const browserTabs = ToolDef.make({
  name: "browser_tabs",
  description: "List the browser's tabs, open a new one, select one, or close one (tabs are numbered from 0).",
  input: Schema.Struct({
    action: OneOf(["list", "new", "select", "close"], "What to do."),
    index: optional(
      Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)).annotate({
        description: "The tab, for select and close (close: default the current one)."
      })
    )
  }),
  untrusted: true,
  handler: ({ action, index }, ctx: BrowserCall) =>
    Effect.gen(function*() {
      const { session } = ctx
      if (action === "new") yield* session.newTab
      if (action === "select" || action === "close") {
        const at = index ?? (action === "close" ? (yield* session.tabs).current : undefined)
        if (at === undefined) {
          return ToolOutcome.failure("invalid_tool_input", "Invalid input for browser_tabs: select needs an index")
        }
        if (action === "select") {
          yield* session.selectTab(at)
        } else yield* session.closeTab(at)
      }
      const { current, pages } = yield* session.tabs
      const tabs = yield* Effect.forEach(pages, (page, i) =>
        Effect.map(
          attempt("reading the tabs", () => page.title()),
          (title) => ({
            index: i,
            current: i === current,
            url: page.url(),
            title
          })
        ))
      if (action === "list" || action === "close") {
        return ToolOutcome.success(
          { tabs },
          tabs.map((t) => `${t.current ? "* " : "  "}${t.index}: ${t.title} (${t.url})`).join("\n")
        )
      }
      return yield* pageState(ctx, yield* session.page, { tabs: tabs.length, current })
    })
})

export const browserFileUpload = ToolDef.make({
  name: "browser_file_upload",
  description:
    "Upload files of the workspace to the file chooser the last click opened (click the page's file input first).",
  input: Schema.Struct({ paths: NonEmptyList("Paths of the files, relative to the workspace root.") }),
  untrusted: true,
  handler: ({ paths }, ctx: BrowserCall) =>
    Effect.gen(function*() {
      const files = ctx.files
      if (files === undefined) return ToolOutcome.failure("browser_error", "the browser has no access to files here")
      const chooser = yield* ctx.session.takeChooser
      if (chooser === undefined) {
        return ToolOutcome.failure(
          "browser_no_file_chooser",
          "no file chooser is open: click the page's file input (browser_click) first"
        )
      }
      const payloads = yield* Effect.forEach(paths, (path) =>
        Effect.map(files.read(path, ctx.maxBytes), (file) => ({
          name: file.path.split("/").at(-1) ?? file.path,
          mimeType: "application/octet-stream",
          buffer: Buffer.from(file.bytes)
        })))
      yield* attempt("uploading", () => chooser.setFiles(payloads))
      return yield* pageState(ctx, yield* ctx.session.page, { uploaded: paths })
    })
})

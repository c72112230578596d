/**
 * The managed browser's tools on real Chromium in the real sandbox, its
 * traffic through the workspace's real egress proxy (restricted to
 * `site.test`, which a real DNS server points at the pages served here on
 * loopback). One browser for the file: the tools are called in order as a
 * model would (each answer's snapshot gives the next call its refs).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { join } from "node:path"
import * as BrowserFamily from "../../../src/browser/BrowserFamily.ts"
import { browserLimitsOf } from "../../../src/browser/BrowserLimits.ts"
import type { CallRef, ToolFamily } from "../../../src/tools/ToolFamily.ts"
import type { ToolOutcome } from "../../../src/tools/ToolOutcome.ts"
import type { EgressRules } from "../../../src/workspace/NetworkPolicy.ts"
import * as WorkspaceTools from "../../../src/workspace/WorkspaceTools.ts"
import { DnsServer } from "../../support/DnsServer.ts"
import { proxiedWorkspace, sandboxLayer, testLimits } from "../../support/TestSandbox.ts"

/** The test site: every request's host and path is recorded. */
const site = Effect.acquireRelease(
  Effect.callback<{ readonly port: number; readonly seen: Array<string>; readonly close: () => void }>((resume) => {
    const seen: Array<string> = []
    const html = (body: string) =>
      `<!doctype html><html><head><title>Test site</title></head><body>${body}</body></html>`
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x")
      seen.push(`${(req.headers.host ?? "").split(":")[0]}${url.pathname}`)
      const page = (body: string) => {
        res.writeHead(200, { "content-type": "text/html" })
        res.end(html(body))
      }
      switch (url.pathname) {
        case "/":
          return page(`<h1>Home</h1><a href="/form">Order form</a>`)
        case "/form":
          return page(
            `<form action="/done"><label>Name <input name="name"></label>` +
              `<label>Color <select name="color"><option>red</option><option>blue</option></select></label>` +
              `<button>Send order</button></form>`
          )
        case "/done":
          return page(`<p>Thanks ${url.searchParams.get("name")}, ${url.searchParams.get("color")} it is</p>`)
        case "/upload":
          return page(
            `<form method="post" enctype="multipart/form-data" action="/uploaded">` +
              `<input type="file" name="f" aria-label="Attachment"><button>Upload</button></form>`
          )
        case "/uploaded": {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on(
            "end",
            () => page(`<p>Received: ${Buffer.concat(chunks).toString("utf8").includes("report body 42")}</p>`)
          )
          return
        }
        case "/download":
          return page(`<a href="/report.csv">Get the report</a>`)
        case "/report.csv":
          res.writeHead(200, { "content-type": "text/csv", "content-disposition": "attachment; filename=report.csv" })
          return res.end("a,b\n1,2\n")
        case "/mixed":
          return page(`<p>Mixed</p><img src="http://other.test:${port()}/pixel.png" alt="pixel">`)
        case "/hog":
          return page(
            `<button onclick="setTimeout(hog, 1000)">Start</button><script>const keep = []; ` +
              `const hog = () => setInterval(() => { for (let i = 0; i < 20; i++) keep.push(new Float64Array(1 << 20).fill(Math.random())) }, 50)</script>`
          )
        default:
          res.writeHead(404)
          return res.end()
      }
    })
    const port = () => {
      const address = server.address()
      return typeof address === "object" && address !== null ? address.port : 0
    }
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ port: port(), seen, close: () => server.close() })))
  }),
  (s) => Effect.sync(s.close)
)

const rules: EgressRules = {
  network: { mode: "restricted", allowDomains: ["site.test"] },
  allowPrivate: true,
  serviceHosts: []
}

let step = 0
const call = (family: ToolFamily, name: string, input: unknown): Effect.Effect<ToolOutcome> => {
  const ref: CallRef = { id: `call_${++step}`, step }
  const running = family.call(name, input, ref)
  return running === undefined ? Effect.die(new Error(`no tool ${name}`)) : running
}

/** The ref of the first snapshot line that contains `text`. */
const refOf = (outcome: ToolOutcome, text: string): string => {
  const line = outcome.text.split("\n").find((l) => l.includes(text))
  const ref = line === undefined ? null : /\[ref=([a-z0-9]+)\]/.exec(line)
  if (ref === null) throw new Error(`no element with ${text} in:\n${outcome.text}`)
  return ref[1]
}

const opened = (id: string, limits = browserLimitsOf.standard) =>
  Effect.gen(function*() {
    // Commands and the browser share the uid's process limit: room for both (BrowserLimits).
    const { sandbox, workspace } = yield* proxiedWorkspace(id, rules, { ...testLimits, processes: 256 })
    const files = WorkspaceTools.make({ sandbox, workspace, shell: false, env: {}, secrets: [] }).files
    const family = yield* BrowserFamily.open({
      sandbox,
      workspace,
      limits,
      rules,
      tabs: true,
      files,
      screenshots: undefined,
      downloads: undefined,
      maxBytes: 1024 * 1024
    })
    return { family, workspace }
  })

/** The file's one browser (the limit test starts its own). */
class SharedBrowser extends Context.Service<SharedBrowser, Effect.Success<ReturnType<typeof opened>>>()(
  "test/SharedBrowser"
) {}

const peers = Layer.merge(sandboxLayer, DnsServer.layer({ "site.test": "127.0.0.1", "other.test": "127.0.0.1" }))

describe("the managed browser", () => {
  layer(Layer.provideMerge(Layer.effect(SharedBrowser)(opened("ws_browser")), peers), {
    excludeTestServices: true,
    timeout: 120_000
  })((it) => {
    it.effect(
      "follows a link, fills and submits a form, reads snapshots, switches tabs, uploads and downloads",
      () =>
        Effect.gen(function*() {
          const server = yield* site
          const { family, workspace } = yield* SharedBrowser
          const base = `http://site.test:${server.port}`

          const home = yield* call(family, "browser_navigate", { url: `${base}/` })
          assert.isFalse(home.isError, home.text)
          assert.include(home.modelText ?? "", `<untrusted_data source="browser_navigate">`)
          assert.include(home.text, `heading "Home" [level=1]`)

          const form = yield* call(family, "browser_click", { ref: refOf(home, `link "Order form"`) })
          assert.include(form.text, `Page URL: ${base}/form`)
          const typed = yield* call(family, "browser_type", { ref: refOf(form, `textbox "Name"`), text: "Ada" })
          const chosen = yield* call(family, "browser_select_option", {
            ref: refOf(typed, `combobox "Color"`),
            values: ["blue"]
          })
          const done = yield* call(family, "browser_click", { ref: refOf(chosen, `button "Send order"`) })
          assert.include(done.text, "Thanks Ada, blue it is")
          assert.include(done.text, `Page URL: ${base}/done?name=Ada&color=blue`)

          const back = yield* call(family, "browser_navigate_back", {})
          assert.include(back.text, `Page URL: ${base}/form`)

          const opened2 = yield* call(family, "browser_tabs", { action: "new" })
          assert.include(opened2.text, "Page URL: about:blank")
          yield* call(family, "browser_navigate", { url: `${base}/` })
          const list = yield* call(family, "browser_tabs", { action: "list" })
          assert.deepStrictEqual(list.output, {
            tabs: [
              { index: 0, current: false, url: `${base}/form`, title: "Test site" },
              { index: 1, current: true, url: `${base}/`, title: "Test site" }
            ]
          })
          const selected = yield* call(family, "browser_tabs", { action: "select", index: 0 })
          assert.include(selected.text, `Page URL: ${base}/form`)
          const missing = yield* call(family, "browser_tabs", { action: "select", index: 5 })
          assert.deepStrictEqual(missing.output, {
            type: "tool-output-error",
            error: { code: "browser_error", message: "there is no tab 5; the tabs are 0 to 1" }
          })

          writeFileSync(join(workspace.dir, "report.txt"), "report body 42")
          const upload = yield* call(family, "browser_navigate", { url: `${base}/upload` })
          const noChooser = yield* call(family, "browser_file_upload", { paths: ["report.txt"] })
          assert.strictEqual(noChooser.isError, true)
          assert.include(noChooser.text, "browser_no_file_chooser")
          yield* call(family, "browser_click", { ref: refOf(upload, `button "Attachment"`) })
          const uploaded = yield* call(family, "browser_file_upload", { paths: ["report.txt"] })
          assert.isFalse(uploaded.isError, uploaded.text)
          const sent = yield* call(family, "browser_click", { ref: refOf(uploaded, `button "Upload"`) })
          assert.include(sent.text, "Received: true")

          const download = yield* call(family, "browser_navigate", { url: `${base}/download` })
          const got = yield* call(family, "browser_click", { ref: refOf(download, `link "Get the report"`) })
          assert.include(got.text, "Download completed: report.csv at downloads/report.csv")
          assert.strictEqual(readFileSync(join(workspace.dir, "downloads", "report.csv"), "utf8"), "a,b\n1,2\n")

          const shot = yield* call(family, "browser_take_screenshot", {})
          assert.isFalse(shot.isError, shot.text)
          assert.include(shot.text, "image/png")

          const waited = yield* call(family, "browser_wait_for", { text: "Get the report" })
          assert.isFalse(waited.isError, waited.text)
        }),
      120_000
    )

    it.effect(
      "restricted network: a destination outside allowDomains is refused before any request, subresources too",
      () =>
        Effect.gen(function*() {
          const server = yield* site
          const { family } = yield* SharedBrowser
          const refused = yield* call(family, "browser_navigate", { url: `http://other.test:${server.port}/` })
          assert.deepStrictEqual(refused.output, {
            type: "tool-output-error",
            error: {
              code: "browser_refused",
              message:
                `the workspace's network policy (restricted) refuses http://other.test:${server.port}: other.test is not in the workspace's allowDomains`
            }
          })
          const mixed = yield* call(family, "browser_navigate", { url: `http://site.test:${server.port}/mixed` })
          assert.isFalse(mixed.isError, mixed.text)
          assert.deepStrictEqual(server.seen.filter((s) => s.startsWith("other.test")), [])
          assert.deepStrictEqual(server.seen.filter((s) => !s.endsWith("/favicon.ico")), ["site.test/mixed"])
        }),
      120_000
    )

    it.effect(
      "a browser over its memory limit is killed, the call says so, and the next call starts a new one",
      () =>
        Effect.gen(function*() {
          const server = yield* site
          const { family } = yield* opened("ws_browser_hog", {
            ...browserLimitsOf.standard,
            rssBytes: 600 * 1024 * 1024
          })
          const hog = yield* call(family, "browser_navigate", { url: `http://site.test:${server.port}/hog` })
          assert.isFalse(hog.isError, hog.text)
          const started = yield* call(family, "browser_click", { ref: refOf(hog, `button "Start"`) })
          assert.isFalse(started.isError, started.text)
          const waited = yield* call(family, "browser_wait_for", { text: "never shown" })
          assert.strictEqual(waited.isError, true)
          assert.include(waited.text, "browser_limit: the browser used")
          assert.include(waited.text, "over its limit of 600 MiB, and was stopped")
          const again = yield* call(family, "browser_navigate", { url: `http://site.test:${server.port}/` })
          assert.isFalse(again.isError, again.text)
          assert.include(again.text, "Note: the browser was started again (the browser used")
          assert.include(again.text, `heading "Home"`)
        }),
      120_000
    )
  })
})

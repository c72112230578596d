/**
 * One whole-service run on real Chromium in the real sandbox (issue 30): a
 * profile stored through the API (a session cookie for site.test) logs the
 * agent into a local test site (site.test resolves to loopback through the
 * service's DNS setting, reached under the workspace's restricted network);
 * the agent opens a second tab, fills and submits a form there, downloads the
 * result into `downloads/` and takes a screenshot. With
 * `browserScreenshots` and `browserDownloads` both reach the export handler,
 * signed and verified, and the model reads the handler's refs.
 */
import { assert } from "@effect/vitest"
import { Clock, Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { IdGenerator } from "../../src/IdGenerator.ts"
import { aliceProfile } from "../support/BrowserProfileFixture.ts"
import { agentWithThread, callIdsOf, failureTextsOf, outputsOf, send, toolStep } from "../support/Conversation.ts"
import { DnsServer } from "../support/DnsServer.ts"
import * as HookServer from "../support/HookServer.ts"
import { checkDispatch, createHandler, receivedSince } from "../support/ResultHandlerDeliveries.ts"
import * as TestServer from "../support/TestServer.ts"

class Site extends Context.Service<Site, { readonly port: number; readonly orders: Array<string> }>()(
  "test/BrowserJourneySite"
) {}

const page = (body: string) => `<!doctype html><html><head><title>Shop</title></head><body>${body}</body></html>`

/** Every page needs the session cookie; the form posts an order, whose result is a download. */
const site = Effect.acquireRelease(
  Effect.callback<{ readonly port: number; readonly orders: Array<string>; readonly close: () => void }>(
    (resume) => {
      const orders: Array<string> = []
      const server = createServer((req, res) => {
        const session = /(?:^|; )session=([^;]+)/.exec(req.headers.cookie ?? "")?.[1]
        const url = new URL(req.url ?? "/", "http://site.test")
        if (session === undefined) {
          res.writeHead(401, { "content-type": "text/html" })
          return res.end(page("<h1>Not logged in</h1>"))
        }
        if (url.pathname === "/") {
          res.writeHead(200, { "content-type": "text/html" })
          return res.end(page(`<h1>Logged in as ${session}</h1>`))
        }
        if (url.pathname === "/form") {
          res.writeHead(200, { "content-type": "text/html" })
          return res.end(page(
            `<h1>New order</h1><form method="post" action="/submit"><label>Customer <input name="customer"></label>`
              + `<button type="submit">Place order</button></form>`
          ))
        }
        if (url.pathname === "/submit" && req.method === "POST") {
          let raw = ""
          req.on("data", (chunk: Buffer) => (raw += chunk.toString()))
          return req.on("end", () => {
            const customer = new URLSearchParams(raw).get("customer") ?? ""
            orders.push(`${session}:${customer}`)
            res.writeHead(200, { "content-type": "text/html" })
            res.end(page(
              `<h1>Order placed for ${customer}</h1>`
                + `<a href="/result.csv?customer=${encodeURIComponent(customer)}">Download result</a>`
            ))
          })
        }
        if (url.pathname === "/result.csv") {
          res.writeHead(200, {
            "content-type": "text/csv",
            "content-disposition": "attachment; filename=\"order.csv\""
          })
          return res.end(`customer,placed_by\n${url.searchParams.get("customer")},${session}\n`)
        }
        res.writeHead(404)
        res.end()
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ port, orders, close: () => server.close() }))
      })
    }
  ),
  (s) => Effect.sync(s.close)
)

const Harness = Layer.unwrap(
  Effect.gen(function*() {
    const dns = yield* DnsServer
    const { orders, port } = yield* site
    return Layer.mergeAll(
      TestServer.layer({ dnsServers: [dns.address] }),
      HookServer.HookServer.layer,
      Layer.succeed(Site)({ port, orders })
    )
  })
).pipe(Layer.provideMerge(DnsServer.layer({ "site.test": "127.0.0.1" })))

const pngMagic = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString("base64").slice(0, 4)
const csv = "customer,placed_by\nACME Corp,alice\n"

TestServer.suiteWith(Harness)("browser journey", (it) => {
  it.effect(
    "a stored profile logs in; a form in a second tab; the download and the screenshot reach the handler",
    () =>
      Effect.gen(function*() {
        const server = yield* HookServer.HookServer
        const { orders, port } = yield* Site
        const ids = yield* IdGenerator
        const put = yield* TestServer.request("PUT", "/v1/browser-profiles/shop-login", { body: aliceProfile })
        assert.strictEqual(put.status, 200, put.text)
        const { handler, path, secret } = yield* createHandler()
        yield* server.answerWith(HookServer.reply(200, { artifactId: "exp-1", ref: { kind: "drive", id: "d-7" } }))
        const { agent, thread } = yield* agentWithThread({
          workspace: { type: "managed", network: { mode: "restricted", allowDomains: ["site.test"] } },
          capabilities: { browser: { authenticated: { profileKey: "shop-login" }, tabs: true, files: true } },
          artifacts: {
            exports: {
              resultHandlerId: handler.id,
              include: { browserScreenshots: true, browserDownloads: true }
            }
          }
        })
        const origin = `http://site.test:${port}`
        const before = (yield* server.received).length
        const sentAtMs = yield* Clock.currentTimeMillis
        const { parsed, runId } = yield* send(
          thread.id,
          [
            toolStep("browser_navigate", { url: `${origin}/` }),
            toolStep("browser_tabs", { action: "new" }),
            toolStep("browser_navigate", { url: `${origin}/form` }),
            toolStep("browser_type", { ref: "e5", text: "ACME Corp", submit: true }),
            toolStep("browser_click", { ref: "f1e3" }),
            toolStep("read_file", { path: "downloads/order.csv" }),
            toolStep("browser_take_screenshot", {})
          ].join("\n")
        )
        const outputs = outputsOf(parsed.chunks)
        assert.deepStrictEqual(failureTextsOf(parsed.chunks), [], JSON.stringify(outputs))
        const [home, tabs, form, typed, clicked, read, shot] = outputs as ReadonlyArray<Record<string, unknown>>
        // Logged in only by the profile's cookie.
        assert.strictEqual(home.snapshot, "- heading \"Logged in as alice\" [level=1] [ref=e2]")
        assert.deepStrictEqual({ tabs: tabs.tabs, current: tabs.current }, { tabs: 2, current: 1 })
        assert.include(String(form.snapshot), "textbox \"Customer\" [ref=e5]")
        assert.include(String(typed.snapshot), "heading \"Order placed for ACME Corp\"")
        assert.deepStrictEqual(orders, ["alice:ACME Corp"])
        // The download: in the workspace with its exact content, exported with the handler's ref.
        assert.deepStrictEqual(
          (clicked.downloads as ReadonlyArray<Record<string, unknown>>).map((d) => ({
            filename: d.filename,
            path: d.path,
            state: d.state,
            export: d.export,
            artifact: d.artifact
          })),
          [{
            filename: "order.csv",
            path: "downloads/order.csv",
            state: "completed",
            export: { artifactId: "exp-1" },
            artifact: { ref: { kind: "drive", id: "d-7" } }
          }]
        )
        assert.strictEqual(read.content, csv)
        assert.deepStrictEqual(shot.artifact, { ref: { kind: "drive", id: "d-7" } })
        assert.strictEqual(shot.pageUrl, `${origin}/submit`)

        // The handler received both, signed: the download (export:1 of the click), then the screenshot.
        const callIds = callIdsOf(parsed.chunks)
        const received = yield* receivedSince(before)
        assert.strictEqual(received.length, 2)
        const expected = {
          path,
          secret,
          sentAtMs,
          organizationId: "org_acme",
          agentId: agent.id,
          runId,
          handlerId: handler.id
        }
        const download = yield* checkDispatch(received[0], {
          ...expected,
          requestId: ids.derive("request", `${runId}:${callIds[4]}:export:1`)
        })
        assert.strictEqual(download.toolName, "browser_download")
        assert.strictEqual(download.mediaType, "text/csv")
        const file = download.content as { kind: string; base64: string }
        assert.strictEqual(file.kind, "base64")
        assert.strictEqual(Buffer.from(file.base64, "base64").toString(), csv)
        const screenshot = yield* checkDispatch(received[1], {
          ...expected,
          requestId: ids.derive("request", `${runId}:${callIds[6]}:export`)
        })
        assert.strictEqual(screenshot.toolName, "browser_take_screenshot")
        assert.strictEqual(screenshot.mediaType, "image/png")
        assert.strictEqual((screenshot.content as { base64: string }).base64.slice(0, 4), pngMagic)
      }),
    180_000
  )
})

/**
 * web_fetch against a real local site through the guarded client: readable
 * Markdown without scripts or navigation, redirect chains followed and each
 * hop re-checked (a hop to a link-local metadata address refused even where
 * SVC_ALLOW_PRIVATE_URLS=1 lets loopback through), an oversized page refused,
 * a PDF read as text by pdftotext, JSON as it is, and the result fenced as
 * untrusted for the model.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import type { IncomingMessage, ServerResponse } from "node:http"
import { ToolFailureOutput } from "../../../domain/Chunk.ts"
import { Outbound } from "../../../src/outbound/Outbound.ts"
import type { ToolOutcome } from "../../../src/tools/ToolOutcome.ts"
import { userAgent } from "../../../src/web/WebRequest.ts"
import * as WebTools from "../../../src/web/WebTools.ts"
import { listen } from "../../support/HttpPeer.ts"

const article = `<!doctype html><html><head><title>Harbour news</title><script>stealCookies()</script>
<style>body { color: red }</style></head><body>
<nav><a href="/home">Home</a> <a href="/about">About us</a> <a href="/contact">Contact</a></nav>
<header>Site banner</header>
<article><h1>The harbour reopens</h1>
<p>The harbour reopened on Monday after ${"a long winter of repairs to the old stone pier, ".repeat(12)}said the
<a href="/people/mayor">mayor</a>.</p>
<p>Ferries run <strong>every hour</strong> again.</p>
<script>document.write("injected")</script></article>
<footer>Copyright footer text</footer></body></html>`

/** A one-page PDF saying `text`, with a correct cross-reference table. */
const pdfSaying = (text: string): Buffer => {
  const content = `BT /F1 18 Tf 20 100 Td (${text}) Tj ET`
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 144] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
  ]
  let body = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((object, i) => {
    offsets.push(body.length)
    body += `${i + 1} 0 obj\n${object}\nendobj\n`
  })
  const xref = body.length
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  body += offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(body, "latin1")
}

const userAgents: Array<string> = []

const site = (req: IncomingMessage, res: ServerResponse) => {
  userAgents.push(req.headers["user-agent"] ?? "")
  const send = (type: string, body: string | Buffer) => {
    res.writeHead(200, { "content-type": type })
    res.end(body)
  }
  switch (req.url) {
    case "/article":
      return send("text/html; charset=utf-8", article)
    case "/hop1":
      return res.writeHead(302, { location: "/hop2" }).end()
    case "/hop2":
      return res.writeHead(301, { location: "/article" }).end()
    case "/to-metadata":
      return res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end()
    case "/big":
      return send("text/plain", "x".repeat(5_000))
    case "/report.pdf":
      return send("application/pdf", pdfSaying("Quarterly revenue grew by 12 percent"))
    case "/data.json":
      return send("application/json", JSON.stringify({ answer: 42 }))
    case "/image.png":
      return send("image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47]))
    case "/missing":
      res.writeHead(404, { "content-type": "text/plain" })
      return res.end("no")
    default:
      return res.writeHead(500).end()
  }
}

const call = (tools: ReturnType<typeof WebTools.family>, input: Record<string, unknown>) => {
  const run = tools.call("web_fetch", input, { id: "tc_1", step: 0 })
  return run === undefined ? Effect.die(new Error("web_fetch is not offered")) : run
}

const Page = Schema.Struct({ url: Schema.String, title: Schema.NullOr(Schema.String), content: Schema.String })

const pageOf = (outcome: ToolOutcome) => {
  assert.isFalse(outcome.isError, outcome.text)
  return Schema.decodeUnknownSync(Page)(outcome.output)
}

const errorOf = (outcome: ToolOutcome) => {
  assert.isTrue(outcome.isError)
  return Schema.decodeUnknownSync(ToolFailureOutput)(outcome.output).error
}

/** The development setting: loopback and private addresses allowed, as in tests. */
const development = WebTools.family(Outbound.make({ allowPrivate: true, dnsServers: [] }), Option.none())

describe("web_fetch", () => {
  it.effect("reads HTML as Markdown without scripts, styles or navigation, fenced as untrusted", () =>
    Effect.gen(function*() {
      const port = yield* listen(site)
      const outcome = yield* call(development, { url: `http://127.0.0.1:${port}/article` })
      const page = pageOf(outcome)
      assert.strictEqual(page.title, "Harbour news")
      assert.include(page.content, "The harbour reopens")
      assert.include(page.content, `[mayor](http://127.0.0.1:${port}/people/mayor)`)
      assert.include(page.content, "**every hour**")
      for (const chrome of ["stealCookies", "injected", "About us", "Site banner", "Copyright footer", "color: red"]) {
        assert.notInclude(page.content, chrome)
      }
      assert.isTrue(outcome.modelText?.startsWith("<untrusted") ?? false, outcome.modelText)
      assert.include(outcome.modelText ?? "", "The harbour reopens")
      assert.strictEqual(userAgents.at(-1), userAgent)
    }).pipe(Effect.scoped))

  it.effect("plain text and raw HTML on request", () =>
    Effect.gen(function*() {
      const port = yield* listen(site)
      const text = pageOf(yield* call(development, { url: `http://127.0.0.1:${port}/article`, format: "text" }))
      assert.include(text.content, "Ferries run every hour again.")
      assert.notInclude(text.content, "**")
      const html = pageOf(yield* call(development, { url: `http://127.0.0.1:${port}/article`, format: "html" }))
      assert.strictEqual(html.content, article)
    }).pipe(Effect.scoped))

  it.effect("follows a redirect chain and answers the final URL", () =>
    Effect.gen(function*() {
      const port = yield* listen(site)
      const page = pageOf(yield* call(development, { url: `http://127.0.0.1:${port}/hop1` }))
      assert.strictEqual(page.url, `http://127.0.0.1:${port}/article`)
      assert.include(page.content, "The harbour reopens")
    }).pipe(Effect.scoped))

  it.effect("refuses a redirect to the cloud metadata address even where private addresses are allowed", () =>
    Effect.gen(function*() {
      const port = yield* listen(site)
      const error = errorOf(yield* call(development, { url: `http://127.0.0.1:${port}/to-metadata` }))
      assert.deepStrictEqual(error, {
        code: "url_not_allowed",
        message:
          "The URL is not allowed: http://169.254.169.254/latest/meta-data/ points to 169.254.169.254 is a link-local or cloud metadata address."
      })
      const direct = errorOf(yield* call(development, { url: "http://[::ffff:169.254.169.254]/" }))
      assert.strictEqual(direct.code, "url_not_allowed")
      // Refused by name, before any lookup.
      assert.deepStrictEqual(errorOf(yield* call(development, { url: "http://metadata.google.internal/x" })), {
        code: "url_not_allowed",
        message:
          "The URL is not allowed: http://metadata.google.internal/x points to metadata.google.internal, a cloud metadata host."
      })
    }).pipe(Effect.scoped))

  it.effect("refuses loopback, and plain http, under the production policy", () =>
    Effect.gen(function*() {
      const port = yield* listen(site)
      const production = WebTools.family(Outbound.make({ allowPrivate: false, dnsServers: [] }), Option.none())
      const error = errorOf(yield* call(production, { url: `http://127.0.0.1:${port}/article` }))
      assert.deepStrictEqual(error, {
        code: "url_not_allowed",
        message: `The URL is not allowed: http://127.0.0.1:${port}/article must use https.`
      })
      const https = errorOf(yield* call(production, { url: `https://127.0.0.1:${port}/article` }))
      assert.strictEqual(https.code, "url_not_allowed")
    }).pipe(Effect.scoped))

  it.effect("gives up on a page that does not answer within 30 s", () =>
    Effect.gen(function*() {
      const asked = yield* Deferred.make<void>()
      const port = yield* listen(() => {
        Deferred.doneUnsafe(asked, Effect.void)
      })
      const fiber = yield* Effect.forkChild(call(development, { url: `http://127.0.0.1:${port}/slow` }))
      yield* Deferred.await(asked)
      yield* TestClock.adjust("30 seconds")
      assert.deepStrictEqual(errorOf(yield* Fiber.join(fiber)), {
        code: "fetch_timeout",
        message: `http://127.0.0.1:${port}/slow did not answer within 30000 ms.`
      })
    }).pipe(Effect.scoped))

  it.effect("refuses a page larger than maxBytes", () =>
    Effect.gen(function*() {
      const port = yield* listen(site)
      const url = `http://127.0.0.1:${port}/big`
      assert.deepStrictEqual(errorOf(yield* call(development, { url, maxBytes: 1_000 })), {
        code: "response_too_large",
        message: `${url} is larger than 1000 bytes (maxBytes); nothing of it was kept.`
      })
      assert.strictEqual(pageOf(yield* call(development, { url, maxBytes: 5_000 })).content.length, 5_000)
    }).pipe(Effect.scoped))

  it.effect("reads a PDF as text and JSON as it is; refuses an image and answers an HTTP error", () =>
    Effect.gen(function*() {
      const port = yield* listen(site)
      const pdf = pageOf(yield* call(development, { url: `http://127.0.0.1:${port}/report.pdf` }))
      assert.strictEqual(pdf.content, "Quarterly revenue grew by 12 percent")
      const json = pageOf(yield* call(development, { url: `http://127.0.0.1:${port}/data.json` }))
      assert.strictEqual(json.content, `{"answer":42}`)
      const image = errorOf(yield* call(development, { url: `http://127.0.0.1:${port}/image.png` }))
      assert.strictEqual(image.code, "unsupported_content_type")
      const missing = errorOf(yield* call(development, { url: `http://127.0.0.1:${port}/missing` }))
      assert.deepStrictEqual(missing, {
        code: "http_error",
        message: `http://127.0.0.1:${port}/missing answered HTTP 404.`,
        details: { status: 404 }
      })
    }).pipe(Effect.scoped))
})

/**
 * web_fetch over real TLS: a local https site whose certificate a test CA
 * signed, the process trusting that CA as a deployment does with
 * NODE_EXTRA_CA_CERTS, and host names resolved to it by a real DNS server
 * (SVC_DNS_SERVERS). A page is read as Markdown, a redirect to another https
 * path followed, and a certificate of a CA nobody trusts, or for another
 * name, refused with the tool error fetch_failed saying so.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { getCACertificates, setDefaultCACertificates } from "node:tls"
import { ToolFailureOutput } from "../../../domain/Chunk.ts"
import { Outbound } from "../../../src/outbound/Outbound.ts"
import type { ToolOutcome } from "../../../src/tools/ToolOutcome.ts"
import * as WebTools from "../../../src/web/WebTools.ts"
import { DnsServer } from "../../support/DnsServer.ts"
import { listen } from "../../support/HttpPeer.ts"
import { hostCerts } from "../../support/RunnerCerts.ts"

const article = `<!doctype html><html><head><title>Harbour news</title></head><body>
<nav><a href="/home">Home</a> <a href="/about">About us</a></nav>
<article><h1>The harbour reopens</h1>
<p>The harbour reopened on Monday after ${"a long winter of repairs to the old stone pier, ".repeat(12)}said the
<a href="/people/mayor">mayor</a>.</p></article></body></html>`

interface Sites {
  /** web.test, with a certificate of the trusted CA. */
  readonly trusted: number
  /** stranger.test, with a certificate of a CA the process does not trust. */
  readonly stranger: number
  /** wrong.test, presenting web.test's certificate (trusted CA, another name). */
  readonly wrongName: number
  readonly tools: ReturnType<typeof WebTools.family>
}

class Site extends Context.Service<Site, Sites>()("test/WebFetchTlsSite") {}

const sitesLayer = Layer.effect(Site)(
  Effect.gen(function*() {
    const dns = yield* DnsServer
    const web = yield* hostCerts("web.test")
    const stranger = yield* hostCerts("stranger.test")
    // As NODE_EXTRA_CA_CERTS would: web.test's CA is trusted, stranger.test's is not.
    setDefaultCACertificates([...getCACertificates("default"), web.ca])
    let strangerPort = 0
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      switch (req.url) {
        case "/article":
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
          return res.end(article)
        case "/moved":
          return res.writeHead(302, { location: "/article" }).end()
        case "/to-stranger":
          return res.writeHead(302, { location: `https://stranger.test:${strangerPort}/article` }).end()
        default:
          return res.writeHead(404).end()
      }
    }
    const trusted = yield* listen(handler, web)
    strangerPort = yield* listen(handler, stranger)
    const wrongName = yield* listen(handler, web)
    const outbound = Outbound.make({ allowPrivate: true, dnsServers: [dns.address] })
    return Site.of({ trusted, stranger: strangerPort, wrongName, tools: WebTools.family(outbound, Option.none()) })
  })
).pipe(
  Layer.provideMerge(
    DnsServer.layer({ "web.test": "127.0.0.1", "stranger.test": "127.0.0.1", "wrong.test": "127.0.0.1" })
  )
)

const call = (tools: ReturnType<typeof WebTools.family>, url: string) => {
  const run = tools.call("web_fetch", { url }, { id: "tc_1", step: 0 })
  return run === undefined ? Effect.die(new Error("web_fetch is not offered")) : run
}

const Page = Schema.Struct({
  url: Schema.String,
  status: Schema.Number,
  contentType: Schema.String,
  title: Schema.NullOr(Schema.String),
  format: Schema.String,
  content: Schema.String
})

const pageOf = (outcome: ToolOutcome) => {
  assert.isFalse(outcome.isError, outcome.text)
  return Schema.decodeUnknownSync(Page)(outcome.output)
}

const errorOf = (outcome: ToolOutcome) => {
  assert.isTrue(outcome.isError)
  return Schema.decodeUnknownSync(ToolFailureOutput)(outcome.output).error
}

layer(sitesLayer, { timeout: 30_000 })("web_fetch over TLS", (it) => {
  it.effect("reads an https page whose certificate a trusted CA signed, as Markdown", () =>
    Effect.gen(function*() {
      const { tools, trusted } = yield* Site
      const page = pageOf(yield* call(tools, `https://web.test:${trusted}/article`))
      assert.deepStrictEqual(
        { url: page.url, status: page.status, contentType: page.contentType, title: page.title, format: page.format },
        {
          url: `https://web.test:${trusted}/article`,
          status: 200,
          contentType: "text/html; charset=utf-8",
          title: "Harbour news",
          format: "markdown"
        }
      )
      assert.include(page.content, "The harbour reopens")
      assert.include(page.content, `[mayor](https://web.test:${trusted}/people/mayor)`)
      assert.notInclude(page.content, "About us")
    }))

  it.effect("follows a redirect to another https path and answers the final URL", () =>
    Effect.gen(function*() {
      const { tools, trusted } = yield* Site
      const page = pageOf(yield* call(tools, `https://web.test:${trusted}/moved`))
      assert.strictEqual(page.url, `https://web.test:${trusted}/article`)
      assert.include(page.content, "The harbour reopens")
    }))

  it.effect("refuses a certificate no trusted CA signed, directly and on a redirect hop", () =>
    Effect.gen(function*() {
      const { stranger, tools, trusted } = yield* Site
      const url = `https://stranger.test:${stranger}/article`
      assert.deepStrictEqual(errorOf(yield* call(tools, url)), {
        code: "fetch_failed",
        message:
          `${url} could not be fetched: its TLS certificate could not be verified (self-signed certificate in certificate chain).`
      })
      const hop = `https://web.test:${trusted}/to-stranger`
      assert.deepStrictEqual(errorOf(yield* call(tools, hop)), {
        code: "fetch_failed",
        message:
          `${hop} could not be fetched: its TLS certificate could not be verified (self-signed certificate in certificate chain).`
      })
    }))

  it.effect("refuses a trusted CA's certificate for another host name", () =>
    Effect.gen(function*() {
      const { tools, wrongName } = yield* Site
      const url = `https://wrong.test:${wrongName}/article`
      assert.deepStrictEqual(errorOf(yield* call(tools, url)), {
        code: "fetch_failed",
        message:
          `${url} could not be fetched: its TLS certificate could not be verified (Hostname/IP does not match certificate's altnames: Host: wrong.test. is not in the cert's altnames: DNS:web.test).`
      })
    }))
})

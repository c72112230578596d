/**
 * The reference page (`/docs`) and the root (`/`) as a newcomer meets them:
 * `/` leads to the console; the OpenAPI document names the bearer scheme as
 * renderers read it (lowercase), so the page shows `Authorization: Bearer`,
 * never Basic; the page and its script come compressed from this service and
 * the page, loaded in Chromium, fetches nothing from anywhere else (its CSP
 * would refuse it and report an error) and paints within a second.
 */
import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { type IncomingHttpHeaders, request } from "node:http"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { chooseEncoding, contentSecurityPolicy, scriptPath } from "../../http/DocsRoute.ts"
import * as Browser from "../support/Browser.ts"
import * as TestServer from "../support/TestServer.ts"

/** A GET whose body is kept as it came on the wire (fetch would decode it). */
const get = (url: string, headers: Record<string, string> = {}) =>
  Effect.callback<{ readonly status: number; readonly headers: IncomingHttpHeaders; readonly body: Buffer }>(
    (resume) => {
      const req = request(url, { headers: { "accept-encoding": "identity", ...headers } }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (d: Buffer) => chunks.push(d))
        res.on(
          "end",
          () =>
            resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
        )
      })
      req.on("error", (error) => resume(Effect.die(error)))
      req.end()
      return Effect.sync(() => req.destroy())
    }
  )

const SecuritySchemes = Schema.Struct({
  components: Schema.Struct({
    securitySchemes: Schema.Record(Schema.String, Schema.Struct({ type: Schema.String, scheme: Schema.String }))
  })
})

TestServer.suite()("the reference page and the root", (it) => {
  it.effect("GET / is 302 to /console", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const reply = yield* get(`${api.url}/`)
      assert.strictEqual(reply.status, 302)
      assert.strictEqual(reply.headers["location"], "/console")
    }))

  it.effect("the OpenAPI document's security scheme is http 'bearer', lowercase", () =>
    Effect.gen(function*() {
      const reply = yield* TestServer.request("GET", "/v1/openapi.json", { key: null })
      assert.strictEqual(reply.status, 200)
      const spec = Schema.decodeUnknownSync(Schema.fromJsonString(SecuritySchemes))(reply.text)
      assert.deepStrictEqual(spec.components.securitySchemes, { bearer: { type: "http", scheme: "bearer" } })
    }))

  it.effect("the page and its script are served compressed (br, else gzip), the script cacheable, both under a CSP of this origin only", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const brPage = yield* get(`${api.url}/docs`, { "accept-encoding": "gzip, deflate, br" })
      assert.strictEqual(brPage.status, 200)
      assert.strictEqual(brPage.headers["content-encoding"], "br")
      assert.strictEqual(brPage.headers["vary"], "accept-encoding")
      assert.strictEqual(brPage.headers["content-security-policy"], contentSecurityPolicy)
      const html = new TextDecoder().decode(brotliDecompressSync(brPage.body))
      // Every resource the markup loads is this service's: no src or href names another origin.
      const loads = [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1])
      assert.strictEqual(loads.length, 1)
      assert.match(loads[0], new RegExp(`^${scriptPath}\\?v=[0-9a-f]{16}$`))
      assert.notMatch(html, /fonts\.scalar\.com|cdn\.jsdelivr\.net/)

      const gzPage = yield* get(`${api.url}/docs`, { "accept-encoding": "gzip" })
      assert.strictEqual(gzPage.headers["content-encoding"], "gzip")
      assert.strictEqual(new TextDecoder().decode(gunzipSync(gzPage.body)), html)
      const plain = yield* get(`${api.url}/docs`)
      assert.isUndefined(plain.headers["content-encoding"])
      assert.strictEqual(new TextDecoder().decode(plain.body), html)
      // Compressed, the page is a small part of itself.
      assert.isBelow(brPage.body.byteLength, plain.body.byteLength / 5)

      const script = yield* get(`${api.url}${loads[0]}`, { "accept-encoding": "br" })
      assert.strictEqual(script.status, 200)
      assert.strictEqual(script.headers["content-encoding"], "br")
      assert.strictEqual(script.headers["cache-control"], "public, max-age=31536000, immutable")
      assert.match(script.headers["content-type"] ?? "", /^text\/javascript/)
      const raw = brotliDecompressSync(script.body)
      assert.isBelow(script.body.byteLength, raw.byteLength / 3)
      assert.include(raw.subarray(0, 400).toString(), "@scalar/api-reference")
    }))

  it.effect(
    "in Chromium the page fetches only from this origin, paints within a second and shows Bearer auth, never Basic",
    () =>
      Effect.gen(function*() {
        const api = yield* TestServer.TestApi
        // The first request of a process builds and compresses the page and its script (once); paint is timed after.
        yield* get(`${api.url}/docs`)
        yield* get(`${api.url}${scriptPath}`)
        const browser = yield* Browser.open
        const origin = new URL(api.url).origin
        const seen = yield* Browser.on(browser, async (page) => {
          const requested: Array<string> = []
          page.on("request", (request) => requested.push(request.url()))
          // Not waiting for "load": the page paints before its deferred script has run.
          await page.goto(`${api.url}/docs`, { waitUntil: "commit" })
          const paint = await page.waitForFunction(
            `performance.getEntriesByName("first-contentful-paint")[0]?.startTime`,
            undefined,
            { timeout: 30_000 }
          ).then((handle) => handle.jsonValue())
          // The reference is rendered (its 3 MB script parsed and run): an example request with its auth header.
          await page.getByText("Authorization: Bearer", { exact: false }).first().waitFor({ timeout: 60_000 })
          const text = await page.locator("body").innerText()
          return { requested, paint, text }
        })
        assert.deepStrictEqual(seen.requested.filter((url) => new URL(url).origin !== origin), [])
        assert.deepStrictEqual(browser.errors(), [])
        assert.isAbove(Number(seen.paint), 0)
        assert.isBelow(Number(seen.paint), 1000)
        assert.notInclude(seen.text, "Authorization: Basic")
      }),
    120_000
  )

  it.effect.each(
    [
      ["gzip, deflate, br", "br"],
      ["gzip", "gzip"],
      ["br;q=0, gzip", "gzip"],
      ["br;q=0.0, gzip;q=0", "identity"],
      ["", "identity"]
    ] as const
  )(
    "Accept-Encoding %s: %s",
    ([header, expected]) => Effect.sync(() => assert.strictEqual(chooseEncoding(header), expected))
  )
})

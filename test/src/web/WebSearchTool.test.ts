/**
 * web_search on each provider's wire shape: Tavily's `POST /search` served by
 * aimock, a SearXNG-shaped and a Brave-shaped local server recording what
 * they were asked. Results come back as { title, url, snippet, publishedAt? },
 * fenced as untrusted; a provider's error is a tool failure.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Outbound } from "../../../src/outbound/Outbound.ts"
import type { ToolOutcome } from "../../../src/tools/ToolOutcome.ts"
import { parseWebSearch, type WebSearchConfig } from "../../../src/web/WebConfig.ts"
import * as WebTools from "../../../src/web/WebTools.ts"
import * as Aimock from "../../support/Aimock.ts"
import { listen } from "../../support/HttpPeer.ts"

const outbound = Outbound.make({ allowPrivate: true, dnsServers: [] })

const search = (config: WebSearchConfig, input: Record<string, unknown>) => {
  const run = WebTools.family(outbound, Option.some(config)).call("web_search", input, { id: "tc_1", step: 0 })
  return run === undefined ? Effect.die(new Error("web_search is not offered")) : run
}

const ok = (outcome: ToolOutcome) => {
  assert.isFalse(outcome.isError, outcome.text)
  assert.isTrue(outcome.modelText?.startsWith("<untrusted") ?? false)
  return outcome.output
}

/** A local server answering `body` as JSON and remembering the URL and headers of each request. */
const recording = (status: number, body: unknown) =>
  Effect.gen(function*() {
    const seen: Array<{ url: string; headers: IncomingMessage["headers"] }> = []
    const port = yield* listen((req: IncomingMessage, res: ServerResponse) => {
      seen.push({ url: req.url ?? "", headers: req.headers })
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(body))
    })
    return { base: `http://127.0.0.1:${port}`, seen }
  })

describe("web_search", () => {
  it("reads SVC_WEB_SEARCH as the setting spells it", () => {
    assert.deepStrictEqual(parseWebSearch("searxng:https://search.example.com/"), {
      provider: "searxng",
      baseUrl: "https://search.example.com"
    })
    assert.deepStrictEqual(parseWebSearch("tavily"), { provider: "tavily", baseUrl: "https://api.tavily.com" })
    assert.deepStrictEqual(parseWebSearch("brave"), { provider: "brave", baseUrl: "https://api.search.brave.com" })
    assert.deepStrictEqual(parseWebSearch("brave:http://127.0.0.1:9"), {
      provider: "brave",
      baseUrl: "http://127.0.0.1:9"
    })
    assert.strictEqual(parseWebSearch("searxng"), "searxng needs its base URL (searxng:https://search.example.com)")
    assert.strictEqual(
      parseWebSearch("google"),
      "expected searxng:<base url>, tavily[:<base url>] or brave[:<base url>], got 'google'"
    )
  })

  it.effect("SearXNG: GET /search?format=json, the site and recency in its own terms", () =>
    Effect.gen(function*() {
      const peer = yield* recording(200, {
        query: "harbour",
        results: [
          { title: "Harbour", url: "https://news.example/h", content: "Reopens", publishedDate: "2026-11-01T00:00:00" },
          { title: "Pier", url: "https://news.example/p", content: "Repaired", publishedDate: null },
          { title: "Third", url: "https://news.example/3", content: "More" }
        ]
      })
      const config = { provider: "searxng", baseUrl: peer.base, apiKey: Option.none(), strictCapable: true } as const
      const output = ok(
        yield* search(config, { query: "harbour", maxResults: 2, site: "news.example", recency: "week" })
      )
      assert.deepStrictEqual(output, {
        provider: "searxng",
        query: "harbour",
        results: [
          { title: "Harbour", url: "https://news.example/h", snippet: "Reopens", publishedAt: "2026-11-01T00:00:00" },
          { title: "Pier", url: "https://news.example/p", snippet: "Repaired" }
        ]
      })
      const url = new URL(peer.seen[0].url, peer.base)
      assert.strictEqual(url.pathname, "/search")
      assert.deepStrictEqual(Object.fromEntries(url.searchParams), {
        q: "harbour site:news.example",
        format: "json",
        time_range: "week"
      })
    }).pipe(Effect.scoped))

  it.effect("Brave: GET /res/v1/web/search with its key, count and freshness", () =>
    Effect.gen(function*() {
      const peer = yield* recording(200, {
        type: "search",
        web: {
          results: [{ title: "Ferry", url: "https://ferry.example/", description: "Hourly", page_age: "2026-11-20" }]
        }
      })
      const config = {
        provider: "brave",
        baseUrl: peer.base,
        apiKey: Option.some(Redacted.make("brave-key")),
        strictCapable: false
      } as const
      const output = ok(yield* search(config, { query: "ferry times", recency: "day" }))
      assert.deepStrictEqual(output, {
        provider: "brave",
        query: "ferry times",
        results: [{ title: "Ferry", url: "https://ferry.example/", snippet: "Hourly", publishedAt: "2026-11-20" }]
      })
      const url = new URL(peer.seen[0].url, peer.base)
      assert.strictEqual(url.pathname, "/res/v1/web/search")
      assert.deepStrictEqual(Object.fromEntries(url.searchParams), { q: "ferry times", count: "5", freshness: "pd" })
      assert.strictEqual(peer.seen[0].headers["x-subscription-token"], "brave-key")
    }).pipe(Effect.scoped))

  it.effect("Tavily: POST /search with a bearer key, served by aimock", () =>
    Effect.gen(function*() {
      const mock = yield* Aimock.aimock((m) => {
        m.onSearch(/harbour/, [{ title: "Harbour", url: "https://news.example/h", content: "Reopens", score: 0.9 }])
      })
      // aimock journals no search bodies: a recording proxy in front keeps what was sent.
      const proxy = yield* Aimock.recordingProxy(mock.url)
      const config = {
        provider: "tavily",
        baseUrl: proxy.url,
        apiKey: Option.some(Aimock.redactedKey),
        strictCapable: false
      } as const
      const output = ok(yield* search(config, { query: "harbour", maxResults: 3, site: "news.example" }))
      assert.deepStrictEqual(output, {
        provider: "tavily",
        query: "harbour",
        results: [{ title: "Harbour", url: "https://news.example/h", snippet: "Reopens" }]
      })
      const [sent] = proxy.requests()
      assert.strictEqual(sent.path, "/search")
      assert.strictEqual(sent.headers["authorization"], `Bearer ${Aimock.apiKey}`)
      assert.deepStrictEqual(sent.body, { query: "harbour", max_results: 3, include_domains: ["news.example"] })
      assert.strictEqual((yield* mock.journal)[0].method, "POST")
    }).pipe(Effect.scoped))

  it.effect("a provider's error is a tool failure the model reads", () =>
    Effect.gen(function*() {
      const peer = yield* recording(429, { error: "rate limited" })
      const config = { provider: "searxng", baseUrl: peer.base, apiKey: Option.none(), strictCapable: true } as const
      const outcome = yield* search(config, { query: "harbour" })
      assert.deepStrictEqual(outcome.output, {
        type: "tool-output-error",
        error: {
          code: "search_failed",
          message: "The search provider (searxng) answered HTTP 429.",
          details: { status: 429 }
        }
      })
    }).pipe(Effect.scoped))
})

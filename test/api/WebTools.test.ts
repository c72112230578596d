/**
 * `capabilities.web` end to end on the scripted model: an agent with
 * `web: true` searches through a SearXNG-shaped provider and reads the page
 * it found, both results fenced as untrusted; GET /v1/bands says what the
 * deployment offers; without a provider the agent gets web_fetch only; a
 * strict agent, thread or run is refused where the provider is not
 * strict-capable.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { agentWithThread, failuresOf, getRun, outputsOf, send, textOf, toolStep } from "../support/Conversation.ts"
import { listen } from "../support/HttpPeer.ts"
import * as TestServer from "../support/TestServer.ts"

const { expectError, request } = TestServer

class Site extends Context.Service<Site, { readonly base: string }>()("test/WebSite") {}

const page = `<!doctype html><html><head><title>Ferry timetable</title></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<main><h1>Winter timetable</h1><p>${"The ferry leaves the north pier for the island. ".repeat(10)}</p>
<p>Departures every hour from 07:00.</p></main><footer>Harbour board</footer></body></html>`

/** One local site: a SearXNG-shaped `/search` whose result points at its own `/timetable`. */
const handler = (base: () => string) => (req: IncomingMessage, res: ServerResponse) => {
  const url = new URL(req.url ?? "/", "http://site")
  if (url.pathname === "/search") {
    res.writeHead(200, { "content-type": "application/json" })
    return res.end(JSON.stringify({
      query: url.searchParams.get("q"),
      results: [{ title: "Ferry timetable", url: `${base()}/timetable`, content: "Winter departures" }]
    }))
  }
  if (url.pathname === "/timetable") {
    res.writeHead(200, { "content-type": "text/html" })
    return res.end(page)
  }
  res.writeHead(404).end()
}

const withSearch = (provider: "searxng" | "tavily", strictCapable: boolean) =>
  Layer.unwrap(Effect.gen(function*() {
    let base = ""
    const port = yield* listen(handler(() => base))
    base = `http://127.0.0.1:${port}`
    return Layer.merge(
      TestServer.layer({
        webSearch: Option.some({
          provider,
          baseUrl: base,
          apiKey: provider === "searxng" ? Option.none() : Option.some(Redacted.make("key")),
          strictCapable
        })
      }),
      Layer.succeed(Site)({ base })
    )
  }))

const offered = (threadId: string) =>
  Effect.map(
    send(threadId, "/show-tools"),
    ({ parsed }) =>
      Schema.decodeUnknownSync(Schema.fromJsonString(Schema.Array(Schema.Struct({ name: Schema.String }))))(
        textOf(parsed.message)
      ).map((t) => t.name).filter((n) => n.startsWith("web_"))
  )

const bandsWeb = Effect.map(request("GET", "/v1/bands"), (reply) => {
  assert.strictEqual(reply.status, 200, reply.text)
  return Schema.decodeUnknownSync(Schema.Struct({ web: Schema.Unknown }))(reply.json).web
})

layer(withSearch("searxng", true), { timeout: TestServer.setupTimeout })("web tools with SearXNG", (it) => {
  it.effect("an agent with web: true searches, then reads the page it found", () =>
    Effect.gen(function*() {
      const { base } = yield* Site
      assert.deepStrictEqual(yield* bandsWeb, { fetch: true, search: "searxng", strictSearch: true })
      const { thread } = yield* agentWithThread({ capabilities: { web: true } })
      assert.deepStrictEqual(yield* offered(thread.id), ["web_fetch", "web_search"])
      const { parsed, runId } = yield* send(
        thread.id,
        [
          toolStep("web_search", { query: "ferry timetable", maxResults: 1 }),
          toolStep("web_fetch", { url: `${base}/timetable` }),
          "/text Departures every hour."
        ].join("\n")
      )
      assert.strictEqual((yield* getRun(runId)).status, "completed")
      assert.deepStrictEqual(failuresOf(parsed.chunks), [])
      const [found, read] = outputsOf(parsed.chunks)
      assert.deepStrictEqual(found, {
        provider: "searxng",
        query: "ferry timetable",
        results: [{ title: "Ferry timetable", url: `${base}/timetable`, snippet: "Winter departures" }]
      })
      const content = Schema.decodeUnknownSync(Schema.Struct({ title: Schema.String, content: Schema.String }))(read)
      assert.strictEqual(content.title, "Ferry timetable")
      assert.include(content.content, "# Winter timetable")
      assert.include(content.content, "Departures every hour from 07:00.")
      assert.notInclude(content.content, "Harbour board")
      assert.strictEqual(textOf(parsed.message), "Departures every hour.")
    }))

  it.effect("a strict agent may use a strict-capable provider", () =>
    Effect.gen(function*() {
      const { thread } = yield* agentWithThread({ capabilities: { web: true }, policies: { dataHandling: "strict" } })
      assert.deepStrictEqual(yield* offered(thread.id), ["web_fetch", "web_search"])
    }))
})

layer(withSearch("tavily", false), { timeout: TestServer.setupTimeout })("web tools with Tavily", (it) => {
  it.effect("strict data handling is refused where the provider is not strict-capable", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* bandsWeb, { fetch: true, search: "tavily", strictSearch: false })
      const message =
        "Strict data handling is required but this deployment's web search provider (tavily) is not marked strict-capable (SVC_WEB_SEARCH_STRICT)."
      const body = { capabilities: { web: true }, policies: { dataHandling: "strict" } }
      for (const path of ["/v1/agents", "/v1/agents/validate"]) {
        const refused = yield* expectError(
          yield* request("POST", path, { body }),
          400,
          "invalid_request_error",
          "strict_data_handling_unavailable"
        )
        assert.strictEqual(refused.message, message)
        assert.deepStrictEqual(refused.details, { field: "capabilities.web" })
      }
      // A standard agent on a strict thread: refused when the run starts.
      const { thread } = yield* agentWithThread({ capabilities: { web: true } }, { dataHandling: "strict" })
      const run = yield* expectError(
        yield* request("POST", `/v1/threads/${thread.id}/messages`, { body: { input: "hi" } }),
        400,
        "invalid_request_error",
        "strict_data_handling_unavailable"
      )
      assert.strictEqual(run.message, message)
    }))
})

TestServer.suite()("web tools without a search provider", (it) => {
  it.effect("web: true gives web_fetch only", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* bandsWeb, { fetch: true, search: null, strictSearch: false })
      const { thread } = yield* agentWithThread({ capabilities: { web: true } })
      assert.deepStrictEqual(yield* offered(thread.id), ["web_fetch"])
      const { thread: plain } = yield* agentWithThread()
      assert.deepStrictEqual(yield* offered(plain.id), [])
    }))
})

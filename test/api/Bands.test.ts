import { assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { BandStatus } from "../../domain/Band.ts"
import { Page } from "../../domain/Page.ts"
import { MediaOffer, WebOffer } from "../../http/BandsApi.ts"
import * as TestServer from "../support/TestServer.ts"

const BandPage = Schema.Struct({ ...Page(BandStatus).fields, web: WebOffer, media: MediaOffer })

/** No SVC_MEDIA_*: capabilities.media has no kind to enable. */
const noMedia = { image: null, video: null, speech: null, music: null, soundEffect: null }

/** The built-in price of the scripted model. */
const free = {
  inputCentsPer1k: 0,
  outputCentsPer1k: 0,
  cachedInputCentsPer1k: null,
  source: "built-in",
  catalog: null
} as const

TestServer.suite()("bands", (it) => {
  it.effect("GET /v1/bands lists every band with its availability", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const reply = yield* api.request("GET", "/v1/bands")
      const page = yield* TestServer.expectOk(reply, 200, BandPage)
      assert.deepStrictEqual(page, {
        object: "list",
        data: [
          { object: "band", name: "lite", available: true, strictAvailable: true, price: free },
          { object: "band", name: "core", available: true, strictAvailable: true, price: free },
          { object: "band", name: "frontier", available: false, strictAvailable: false, price: null }
        ],
        hasMore: false,
        nextCursor: null,
        limit: 3,
        // No SVC_WEB_SEARCH: capabilities.web gives web_fetch only.
        web: { fetch: true, search: null, strictSearch: false },
        media: noMedia
      })
      // The wire body is exactly that, with no extra keys.
      assert.deepStrictEqual(reply.json, page)
      assert.isTrue((reply.headers.get("x-request-id") ?? "").startsWith("req_"))
    }))

  it.effect("every workspace sees the same deployment bands", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const a = yield* TestServer.expectOk(yield* api.request("GET", "/v1/bands"), 200, BandPage)
      const b = yield* TestServer.expectOk(
        yield* api.request("GET", "/v1/bands", { key: TestServer.Keys.b }),
        200,
        BandPage
      )
      const c = yield* TestServer.expectOk(
        yield* api.request("GET", "/v1/bands", { key: TestServer.Keys.c }),
        200,
        BandPage
      )
      assert.deepStrictEqual(b, a)
      assert.deepStrictEqual(c, a)
    }))

  it.effect("requires an API key", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      yield* TestServer.expectError(
        yield* api.request("GET", "/v1/bands", { key: null }),
        401,
        "authentication_error",
        "invalid_api_key"
      )
      yield* TestServer.expectError(
        yield* api.request("GET", "/v1/bands", { key: "sk_test_not_a_key" }),
        401,
        "authentication_error",
        "invalid_api_key"
      )
    }))
})

TestServer.suite({
  bands: {
    lite: { route: "openai:gpt-x", strict: false },
    core: { route: "scripted", strict: true },
    frontier: { route: null, strict: false }
  }
})("bands (lite without a strict route)", (it) => {
  it.effect("reports lite available but not strict", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const page = yield* TestServer.expectOk(yield* api.request("GET", "/v1/bands"), 200, BandPage)
      assert.deepStrictEqual(page, {
        object: "list",
        data: [
          { object: "band", name: "lite", available: true, strictAvailable: false, price: null },
          { object: "band", name: "core", available: true, strictAvailable: true, price: free },
          { object: "band", name: "frontier", available: false, strictAvailable: false, price: null }
        ],
        hasMore: false,
        nextCursor: null,
        limit: 3,
        web: { fetch: true, search: null, strictSearch: false },
        media: noMedia
      })
    }))

  it.effect("a band with a route may be used; one without may not", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const agent = yield* api.request("POST", "/v1/agents", { body: { band: "lite" } })
      assert.strictEqual(agent.status, 200)
      const refused = yield* TestServer.expectError(
        yield* api.request("POST", "/v1/agents", { body: { band: "frontier" } }),
        400,
        "invalid_request_error",
        "invalid_request_error"
      )
      assert.strictEqual(refused.details?.["field"], "band")
    }))
})

TestServer.suite({
  bands: {
    lite: { route: null, strict: true },
    core: { route: "scripted", strict: false },
    frontier: { route: "scripted", strict: true }
  }
})("bands (strict without a route)", (it) => {
  it.effect("a band without a route is neither available nor strict-available", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const page = yield* TestServer.expectOk(yield* api.request("GET", "/v1/bands"), 200, BandPage)
      assert.deepStrictEqual(page.data, [
        { object: "band", name: "lite", available: false, strictAvailable: false, price: null },
        { object: "band", name: "core", available: true, strictAvailable: false, price: free },
        { object: "band", name: "frontier", available: true, strictAvailable: true, price: free }
      ])
      assert.strictEqual(page.limit, 3)
      assert.isFalse(page.hasMore)
      assert.isNull(page.nextCursor)
    }))
})

TestServer.suite({
  bands: {
    lite: { route: "openai:gpt-4.1", strict: false },
    core: { route: "anthropic:claude-sonnet-4-5", strict: false },
    frontier: { route: "openai:gpt-test", strict: false }
  },
  routePrices: "anthropic:claude-sonnet-4-5=0.25/1.25"
})("bands (prices from the catalog and SVC_ROUTE_PRICES)", (it) => {
  it.effect("each band shows its route's price and where it comes from; an unpriced route shows null", () =>
    Effect.gen(function*() {
      const api = yield* TestServer.TestApi
      const reply = yield* api.request("GET", "/v1/bands")
      const page = yield* TestServer.expectOk(reply, 200, BandPage)
      assert.deepStrictEqual(page.data, [
        {
          object: "band",
          name: "lite",
          available: true,
          strictAvailable: false,
          // OpenAI's $2 / $8 / $0.50 per million tokens, from the pinned catalog.
          price: {
            inputCentsPer1k: 0.2,
            outputCentsPer1k: 0.8,
            cachedInputCentsPer1k: 0.05,
            source: "catalog",
            catalog: { name: "@pydantic/genai-prices", version: "0.1.8", date: "2026-09-23" }
          }
        },
        {
          object: "band",
          name: "core",
          available: true,
          strictAvailable: false,
          price: {
            inputCentsPer1k: 0.25,
            outputCentsPer1k: 1.25,
            cachedInputCentsPer1k: null,
            source: "configured",
            catalog: null
          }
        },
        { object: "band", name: "frontier", available: true, strictAvailable: false, price: null }
      ])
      assert.deepStrictEqual(reply.json, page)
    }))
})

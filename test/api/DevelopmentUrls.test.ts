/**
 * A URL a development setup registers (a local MCP server over http) is
 * refused by the outbound policy, and the refusal names the setting that
 * allows it in development; a refusal no setting lifts names none.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import * as TestServer from "../support/TestServer.ts"

const hint =
  " For a development server set SVC_ALLOW_PRIVATE_URLS=1 (http and private addresses, never in production);" +
  " SVC_TRUSTED_ORIGINS lists origins allowed as they are."

TestServer.suite({ allowPrivateUrls: false })("development URLs", (it) => {
  it.effect("a local MCP server over http: 400 url_not_allowed naming SVC_ALLOW_PRIVATE_URLS", () =>
    Effect.gen(function*() {
      const reply = yield* TestServer.request("POST", "/v1/tool-servers", {
        body: { name: "local", transport: "http", url: "http://127.0.0.1:3000/mcp" }
      })
      const error = yield* TestServer.expectError(reply, 400, "invalid_request_error", "url_not_allowed")
      assert.strictEqual(error.message, `url 'http://127.0.0.1:3000/mcp' must use https.${hint}`)
    }))

  it.effect("https://localhost: the same hint; a URL that is not one: no hint", () =>
    Effect.gen(function*() {
      const loopback = yield* TestServer.request("POST", "/v1/tool-servers", {
        body: { name: "local", transport: "http", url: "https://localhost/mcp" }
      })
      const error = yield* TestServer.expectError(loopback, 400, "invalid_request_error", "url_not_allowed")
      assert.strictEqual(error.message, `url 'https://localhost/mcp' must use a fully qualified hostname.${hint}`)
      const broken = yield* TestServer.request("POST", "/v1/tool-servers", {
        body: { name: "local", transport: "http", url: "not a url" }
      })
      const plain = yield* TestServer.expectError(broken, 400, "invalid_request_error", "url_not_allowed")
      assert.notInclude(plain.message, "SVC_ALLOW_PRIVATE_URLS")
    }))
})

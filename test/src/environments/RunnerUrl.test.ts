/**
 * The runner's URL rule (issue 31): https, or plain http to a loopback address
 * only; a runner told to skip TLS verification (NODE_TLS_REJECT_UNAUTHORIZED=0)
 * refuses to start.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { checkUrl } from "../../../src/environments/Runner.ts"

const cases: ReadonlyArray<readonly [url: string, env: Record<string, string>, expected: string]> = [
  ["https://agents.example.com/", {}, "https://agents.example.com"],
  ["https://agents.example.com/base/", {}, "https://agents.example.com/base"],
  ["http://127.0.0.1:8080", {}, "http://127.0.0.1:8080"],
  ["http://127.3.4.5:8080", {}, "http://127.3.4.5:8080"],
  ["http://localhost:8080", {}, "http://localhost:8080"],
  ["http://[::1]:8080", {}, "http://[::1]:8080"],
  ["http://agents.example.com", {}, "--url: plain http:// is allowed to a loopback address only; use https://"],
  ["http://10.0.0.5:8080", {}, "--url: plain http:// is allowed to a loopback address only; use https://"],
  ["ftp://agents.example.com", {}, "--url: must be https:// (or http:// to a loopback address)"],
  ["agents.example.com", {}, "--url: 'agents.example.com' is not a URL"],
  [
    "https://agents.example.com",
    { NODE_TLS_REJECT_UNAUTHORIZED: "0" },
    "NODE_TLS_REJECT_UNAUTHORIZED=0: the runner refuses a service whose TLS it cannot verify"
  ]
]

describe("the runner's URL", () => {
  it.effect.each(cases)(
    "%s",
    ([url, env, expected]) =>
      Effect.map(
        Effect.result(checkUrl(url, env)),
        (result) => assert.strictEqual(Result.isSuccess(result) ? result.success : result.failure.message, expected)
      )
  )
})

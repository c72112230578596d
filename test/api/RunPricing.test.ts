/**
 * What a run on a real model route costs, and that this cost is never
 * silently zero where a limit depends on it: `openai:` and `anthropic:` routes
 * are priced from the price catalog unless SVC_ROUTE_PRICES names a price; a
 * run on a route neither prices fails before inference with
 * pricing_unavailable, billing nothing, whenever a cost limit applies to it
 * (its budgetCents, the organization's spend quota, SVC_MAX_RUN_CENTS), and
 * otherwise runs, metering its tokens at no cost. The model is
 * @copilotkit/aimock over HTTP.
 */
import { assert } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { ZeroUsage } from "../../domain/Run.ts"
import { noLimits } from "../../src/access/LimitsConfig.ts"
import type { ServiceConfigShape } from "../../src/config/ServiceConfig.ts"
import { type Aimock, aimock, redactedKey } from "../support/Aimock.ts"
import { agentWithThread, getRun, startRun, streamOf } from "../support/Conversation.ts"
import * as TestServer from "../support/TestServer.ts"

/** The model server, for its request journal. */
class Peer extends Context.Service<Peer, Aimock>()("test/RunPricing/Peer") {}

/** lite: a route nothing prices; core: priced by the catalog; frontier: the catalog's price overridden. */
const harness = (overrides: Partial<ServiceConfigShape>) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => {
        mock.onMessage("hello", { content: "Hi there!", usage: { prompt_tokens: 11, completion_tokens: 4 } })
      })
      const server = TestServer.layer({
        bands: {
          lite: { route: "openai:gpt-unlisted", strict: false },
          core: { route: "openai:gpt-4.1", strict: false },
          frontier: { route: "anthropic:claude-sonnet-4-5", strict: false }
        },
        routePrices: "anthropic:claude-sonnet-4-5=1000/2000",
        openai: { baseUrl: `${peer.url}/v1`, apiKey: Option.some(redactedKey) },
        anthropic: { baseUrl: `${peer.url}/v1`, apiKey: Option.some(redactedKey) },
        ...overrides
      })
      return Layer.merge(server, Layer.succeed(Peer)(peer))
    })
  )

/** Runs "hello" on `band` with `body`; the run and its stream once it ended, and how many model requests it made. */
const hello = (band: string, body: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const peer = yield* Peer
    const before = (yield* peer.journal).length
    const { thread } = yield* agentWithThread({ band })
    const { runId } = yield* startRun(thread.id, { input: "hello", ...body })
    const { chunks } = yield* streamOf(runId)
    return { chunks, run: yield* getRun(runId), modelRequests: (yield* peer.journal).length - before }
  })

/** A run refused for want of a price: failed before any model request, nothing billed, the limit named. */
const assertUnpriced = (
  { chunks, modelRequests, run }: Effect.Success<ReturnType<typeof hello>>,
  limit: string
) => {
  assert.strictEqual(run.status, "failed")
  assert.strictEqual(run.terminalReason, "pricing_unavailable")
  assert.strictEqual(run.error?.code, "pricing_unavailable")
  assert.strictEqual(
    run.error?.message,
    `Route 'openai:gpt-unlisted' has no price (neither SVC_ROUTE_PRICES nor the price catalog lists it), so ${limit} cannot be enforced; the run failed before inference and nothing was billed.`
  )
  assert.deepStrictEqual(run.usage, ZeroUsage)
  assert.strictEqual(modelRequests, 0)
  assert.isFalse(chunks.some((c) => c.type === "start-step"))
  assert.deepStrictEqual(chunks.slice(-3), [
    { type: "data-svc-terminal", data: { terminalReason: "pricing_unavailable" } },
    { type: "data-svc-usage", data: ZeroUsage },
    { type: "finish", finishReason: "error" }
  ])
}

TestServer.suiteWith(harness({}))("route prices without a deployment limit", (it) => {
  it.effect("a route the catalog lists is billed at the catalog's price (gpt-4.1: $2 / $8 per million tokens)", () =>
    Effect.gen(function*() {
      const { modelRequests, run } = yield* hello("core")
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(modelRequests, 1)
      assert.deepStrictEqual(run.usage, {
        inputTokens: 11,
        outputTokens: 4,
        totalTokens: 15,
        costCents: (11 * 0.2 + 4 * 0.8) / 1000,
        steps: 1
      })
    }))

  it.effect("SVC_ROUTE_PRICES overrides the catalog's price of a route", () =>
    Effect.gen(function*() {
      const { run } = yield* hello("frontier")
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.usage?.costCents, (11 * 1000 + 4 * 2000) / 1000)
    }))

  it.effect("without a cost limit, a route nothing prices runs: its tokens are metered, its cost is 0", () =>
    Effect.gen(function*() {
      const { modelRequests, run } = yield* hello("lite")
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(modelRequests, 1)
      assert.deepStrictEqual(run.usage, { inputTokens: 11, outputTokens: 4, totalTokens: 15, costCents: 0, steps: 1 })
    }))

  it.effect("with budgetCents, a route nothing prices fails before inference with pricing_unavailable", () =>
    Effect.gen(function*() {
      assertUnpriced(yield* hello("lite", { budgetCents: 50 }), "budgetCents 50")
    }))
})

TestServer.suiteWith(harness({
  limits: { ...noLimits, spendQuotas: new Map([["*", { cents: 100_000, period: "month" as const }]]) }
}))("route prices under an organization's spend quota", (it) => {
  it.effect("a route nothing prices fails before inference with pricing_unavailable; nothing is billed", () =>
    Effect.gen(function*() {
      assertUnpriced(yield* hello("lite"), "the organization's spend quota")
    }))

  it.effect("a route the catalog prices runs and is billed", () =>
    Effect.gen(function*() {
      const { run } = yield* hello("core")
      assert.strictEqual(run.status, "completed")
      assert.strictEqual(run.usage?.costCents, (11 * 0.2 + 4 * 0.8) / 1000)
    }))
})

TestServer.suiteWith(harness({ maxRunCents: 500 }))("route prices under SVC_MAX_RUN_CENTS", (it) => {
  it.effect("a route nothing prices fails before inference with pricing_unavailable; nothing is billed", () =>
    Effect.gen(function*() {
      assertUnpriced(yield* hello("lite"), "the per-run ceiling of 500 cents")
    }))

  it.effect("with a budget as well, the message names both limits", () =>
    Effect.gen(function*() {
      assertUnpriced(yield* hello("lite", { budgetCents: 20 }), "budgetCents 20, the per-run ceiling of 500 cents")
    }))
})

/**
 * Configuration mistakes stop the service at start with one clear message
 * (a ConfigurationError, which main prints as one line) instead of being
 * dropped or surfacing as a defect later.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { ServiceConfig } from "../../../src/config/ServiceConfig.ts"

const load = (env: Record<string, string>) =>
  Effect.flip(Layer.build(ServiceConfig.layer).pipe(Effect.scoped, Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))))

describe("service configuration", () => {
  it.effect.each([
    [{ SVC_API_KEYS: "sk_only_key" }, "SVC_API_KEYS: expected <key>:<organization>:<workspace>, got an entry with 1 part(s)"],
    [{ SVC_API_KEYS: "sk_a:org_a:" }, "SVC_API_KEYS: expected <key>:<organization>:<workspace>, got an entry with 3 part(s)"],
    [{ SVC_STRICT_BANDS: "core,ultra" }, "SVC_STRICT_BANDS: 'ultra' is not a band (lite, core, frontier)"],
    [
      { SVC_ROUTE_PRICES: "openai:gpt-4.1=0.2/0.8;anthropic:claude=cheap" },
      "SVC_ROUTE_PRICES: expected <route>=<input cents>/<output cents> per 1,000 tokens, got 'anthropic:claude=cheap'"
    ],
    [{ SVC_ROUTE_PRICES: "openai:gpt-4.1=0.2" }, "SVC_ROUTE_PRICES: expected <route>=<input cents>/<output cents> per 1,000 tokens, got 'openai:gpt-4.1=0.2'"]
  ] as const)("%j is refused at start", ([env, message]) =>
    Effect.gen(function*() {
      const error = yield* load(env)
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.strictEqual(error.message, message)
    }))

  it.effect("well-formed values load", () =>
    Effect.gen(function*() {
      const env = { SVC_API_KEYS: "sk_a:org_a:prod", SVC_STRICT_BANDS: "lite, core", SVC_ROUTE_PRICES: "openai:gpt-4.1=0.2/0.8; scripted=0/0" }
      const shape = yield* Effect.gen(function*() {
        return yield* ServiceConfig
      }).pipe(Effect.provide(ServiceConfig.layer), Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))
      assert.strictEqual(shape.seedKeys.length, 1)
      assert.deepStrictEqual(shape.bands.core, { route: "scripted", strict: true })
      assert.deepStrictEqual(shape.bands.frontier, { route: "scripted", strict: false })
    }))
})

/**
 * Configuration mistakes stop the service at start with one clear message
 * (a ConfigurationError, which main prints as one line) instead of being
 * dropped or surfacing as a defect later.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option, Redacted } from "effect"
import { ServiceConfig } from "../../../src/config/ServiceConfig.ts"
import { noTelemetry } from "../../../src/config/TelemetryConfig.ts"
import { signalUrl } from "../../../src/telemetry/Otlp.ts"

const load = (env: Record<string, string>) =>
  Effect.flip(
    Layer.build(ServiceConfig.layer).pipe(
      Effect.scoped,
      Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
    )
  )

describe("service configuration", () => {
  it.effect.each(
    [
      [
        { SVC_API_KEYS: "sk_only_key" },
        "SVC_API_KEYS entry 1: expected <key>:<organization>:<workspace>[:admin], got 1 part(s)"
      ],
      [
        { SVC_API_KEYS: "sk_a:org_a:prod,sk_b:org_a:" },
        "SVC_API_KEYS entry 2: expected <key>:<organization>:<workspace>[:admin], got 3 part(s)"
      ],
      [
        { SVC_API_KEYS: "sk_a:org_a:prod:admin:extra" },
        "SVC_API_KEYS entry 1: expected <key>:<organization>:<workspace>[:admin], got 5 part(s)"
      ],
      // Organization ids are org_...: another form is refused, never renamed silently.
      [
        { SVC_API_KEYS: "sk_a:acme:prod" },
        "SVC_API_KEYS entry 1: organization 'acme' is not an organization id: org_ then letters, digits, '_' or '-' (write org_acme)"
      ],
      [
        { SVC_API_KEYS: "sk_a:org_:prod" },
        "SVC_API_KEYS entry 1: organization 'org_' is not an organization id: org_ then letters, digits, '_' or '-'"
      ],
      [
        { SVC_API_KEYS: "sk_a:org a:prod" },
        "SVC_API_KEYS entry 1: organization 'org a' is not an organization id: org_ then letters, digits, '_' or '-'"
      ],
      [
        { SVC_API_KEYS: "sk_a:org_a:pro d" },
        "SVC_API_KEYS entry 1: workspace 'pro d' must be 1 to 64 letters, digits, '_' or '-'"
      ],
      [
        { SVC_API_KEYS: "sk_a:org_a:prod:owner" },
        "SVC_API_KEYS entry 1: the role must be admin or member, got 'owner'"
      ],
      // The key itself is never echoed.
      [
        { SVC_API_KEYS: "sk_secret<1>:org_a:prod" },
        "SVC_API_KEYS entry 1: the key must be 1 to 256 letters, digits or '_-.~+/='"
      ],
      [{ SVC_STRICT_BANDS: "core,ultra" }, "SVC_STRICT_BANDS: 'ultra' is not a band (lite, core, frontier)"],
      [
        { SVC_ROUTE_PRICES: "openai:gpt-4.1=0.2/0.8;anthropic:claude=cheap" },
        "SVC_ROUTE_PRICES: expected <route>=<input cents>/<output cents>[/<cached input cents>] per 1,000 tokens, got 'anthropic:claude=cheap'"
      ],
      [
        { SVC_ROUTE_PRICES: "openai:gpt-4.1=0.2" },
        "SVC_ROUTE_PRICES: expected <route>=<input cents>/<output cents>[/<cached input cents>] per 1,000 tokens, got 'openai:gpt-4.1=0.2'"
      ],
      [
        { SVC_ROUTE_PRICES: "openai:gpt-4.1=0.2/0.8/0.1/0.1" },
        "SVC_ROUTE_PRICES: expected <route>=<input cents>/<output cents>[/<cached input cents>] per 1,000 tokens, got 'openai:gpt-4.1=0.2/0.8/0.1/0.1'"
      ],
      [{ SVC_LOG_FORMAT: "xml" }, "SVC_LOG_FORMAT must be 'text' or 'json', got 'xml'"],
      [
        { SVC_METRICS_TOKEN: "a-long-enough-token" },
        "SVC_METRICS_TOKEN guards /metrics, which is off: set SVC_METRICS=on too (or unset the token)"
      ],
      [{ SVC_METRICS: "on", SVC_METRICS_TOKEN: "short" }, "SVC_METRICS_TOKEN must be at least 16 characters"],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
        "OTEL_EXPORTER_OTLP_PROTOCOL: this service exports over OTLP/HTTP, 'http/protobuf' or 'http/json'; got 'grpc'"
      ],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
        "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (http://collector:4318), got 'collector:4318'"
      ],
      [
        { SVC_TRUSTED_ORIGINS: "https://mcp.internal/api" },
        "SVC_TRUSTED_ORIGINS: expected http(s)://host[:port] origins, got 'https://mcp.internal/api'"
      ],
      [
        { SVC_TRUSTED_ORIGINS: "mcp.internal:8443" },
        "SVC_TRUSTED_ORIGINS: expected http(s)://host[:port] origins, got 'mcp.internal:8443'"
      ],
      [
        { SVC_TRUSTED_ORIGINS: "https://u:p@mcp.internal" },
        "SVC_TRUSTED_ORIGINS: expected http(s)://host[:port] origins, got 'https://u:p@mcp.internal'"
      ]
    ] as const
  )("%j is refused at start", ([env, message]) =>
    Effect.gen(function*() {
      const error = yield* load(env)
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.strictEqual(error.message, message)
    }))

  it.effect("well-formed values load", () =>
    Effect.gen(function*() {
      const env = {
        SVC_API_KEYS: "sk_a:org_a:prod, sk_b:org_a:ops:admin, sk_c:org_b:prod:member",
        SVC_STRICT_BANDS: "lite, core",
        SVC_ROUTE_PRICES: "openai:gpt-4.1=0.2/0.8/0.05; scripted=0/0",
        SVC_TRUSTED_ORIGINS: "https://MCP.internal:8443/, http://10.0.0.5:8080"
      }
      const shape = yield* Effect.gen(function*() {
        return yield* ServiceConfig
      }).pipe(
        Effect.provide(ServiceConfig.layer),
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
      )
      assert.deepStrictEqual(
        shape.seedKeys.map((k) => [Redacted.value(k.key), k.organizationId, k.workspaceId, k.role]),
        [["sk_a", "org_a", "prod", "member"], ["sk_b", "org_a", "ops", "admin"], ["sk_c", "org_b", "prod", "member"]]
      )
      assert.deepStrictEqual(shape.bands.core, { route: "scripted", strict: true })
      assert.deepStrictEqual(shape.bands.frontier, { route: "scripted", strict: false })
      assert.deepStrictEqual(shape.telemetry, noTelemetry)
      assert.deepStrictEqual(shape.trustedOrigins, ["https://mcp.internal:8443", "http://10.0.0.5:8080"])
    }))

  it.effect("SVC_WEB_SEARCH names the search provider, its key and whether strict agents may use it", () =>
    Effect.gen(function*() {
      const webSearchOf = (env: Record<string, string>) =>
        Effect.map(
          ServiceConfig.pipe(
            Effect.provide(ServiceConfig.layer),
            Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
          ),
          ({ webSearch }) => Option.map(webSearch, (w) => ({ ...w, apiKey: Option.map(w.apiKey, Redacted.value) }))
        )
      assert.deepStrictEqual(yield* webSearchOf({}), Option.none())
      assert.deepStrictEqual(
        yield* webSearchOf({ SVC_WEB_SEARCH: "searxng:http://searx.internal:8888/" }),
        Option.some({
          provider: "searxng" as const,
          baseUrl: "http://searx.internal:8888",
          apiKey: Option.none(),
          strictCapable: true
        })
      )
      assert.deepStrictEqual(
        yield* webSearchOf({ SVC_WEB_SEARCH: "tavily", TAVILY_API_KEY: "tvly-key" }),
        Option.some({
          provider: "tavily" as const,
          baseUrl: "https://api.tavily.com",
          apiKey: Option.some("tvly-key"),
          strictCapable: false
        })
      )
      assert.deepStrictEqual(
        yield* webSearchOf({ SVC_WEB_SEARCH: "brave", BRAVE_SEARCH_API_KEY: "b", SVC_WEB_SEARCH_STRICT: "1" }),
        Option.some({
          provider: "brave" as const,
          baseUrl: "https://api.search.brave.com",
          apiKey: Option.some("b"),
          strictCapable: true
        })
      )
      for (
        const [env, message] of [
          [{ SVC_WEB_SEARCH: "tavily" }, "SVC_WEB_SEARCH: tavily needs its key in TAVILY_API_KEY"],
          [
            { SVC_WEB_SEARCH: "bing" },
            "SVC_WEB_SEARCH: expected searxng:<base url>, tavily[:<base url>] or brave[:<base url>], got 'bing'"
          ],
          [
            { SVC_WEB_SEARCH: "searxng:ftp://x" },
            "SVC_WEB_SEARCH: searxng's base URL must be an http(s) URL without credentials, got 'ftp://x'"
          ]
        ] as const
      ) {
        const error = yield* load(env)
        assert.strictEqual(error.message, message)
      }
    }))

  it.effect("the OTEL_* variables configure the exporter", () =>
    Effect.gen(function*() {
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318/otlp",
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20tok,x-team=agents",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,service.name=agents-eu",
        OTEL_BSP_SCHEDULE_DELAY: "1000",
        SVC_METRICS: "on",
        SVC_LOG_FORMAT: "json"
      }
      const { telemetry } = yield* ServiceConfig.pipe(
        Effect.provide(ServiceConfig.layer),
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
      )
      const otlp = Option.getOrThrow(telemetry.otlp)
      assert.strictEqual(otlp.endpoint, "https://collector.example:4318/otlp")
      assert.strictEqual(otlp.protocol, "http/protobuf")
      assert.deepStrictEqual(otlp.headers.map(([name, value]) => [name, Redacted.value(value)]), [[
        "authorization",
        "Bearer tok"
      ], ["x-team", "agents"]])
      // service.name in OTEL_RESOURCE_ATTRIBUTES is left for the exporter to read.
      assert.strictEqual(otlp.serviceName, undefined)
      assert.strictEqual(otlp.tracesExportMs, 1000)
      assert.strictEqual(otlp.metricsExportMs, 60_000)
      assert.strictEqual(signalUrl(otlp.endpoint, "traces"), "https://collector.example:4318/otlp/v1/traces")
      assert.deepStrictEqual(telemetry.metrics, { enabled: true, token: Option.none() })
      assert.strictEqual(telemetry.logFormat, "json")
    }))
})

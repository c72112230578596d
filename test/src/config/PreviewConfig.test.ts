/**
 * Where previews are served (SVC_PREVIEW_PORT, SVC_PREVIEW_ORIGIN): by
 * default the next port of the API's host, a named origin when one is set,
 * and never the API's own origin (refused at start with one clear line).
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { ServiceConfig } from "../../../src/config/ServiceConfig.ts"
import { PreviewOrigin } from "../../../src/workspace/PreviewOrigin.ts"

const provider = (env: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromEnv({ env }))

/** The previews' settings and the origin their URLs name before the listener binds. */
const load = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const { previews } = yield* ServiceConfig
    return { previews, origin: yield* (yield* PreviewOrigin).current }
  }).pipe(
    Effect.provide(PreviewOrigin.layer.pipe(Layer.provideMerge(ServiceConfig.layer))),
    Effect.provide(provider(env))
  )

const refusal = (env: Record<string, string>) =>
  Effect.flip(Layer.build(ServiceConfig.layer).pipe(Effect.scoped, Effect.provide(provider(env))))

describe("preview configuration", () => {
  it.effect.each(
    [
      [{}, { port: 8081, origin: Option.none() }, "http://127.0.0.1:8081"],
      [{ PORT: "3000", HOST: "0.0.0.0" }, { port: 3001, origin: Option.none() }, "http://0.0.0.0:3001"],
      [{ SVC_PREVIEW_PORT: "9000" }, { port: 9000, origin: Option.none() }, "http://127.0.0.1:9000"],
      // The host clients reach (SVC_PUBLIC_URL's), on the previews' port.
      [
        { SVC_PUBLIC_URL: "https://agents.example.com/api/" },
        { port: 8081, origin: Option.none() },
        "https://agents.example.com:8081"
      ],
      [
        { SVC_PREVIEW_ORIGIN: "https://Previews.Example.com" },
        { port: 8081, origin: Option.some("https://previews.example.com") },
        "https://previews.example.com"
      ],
      [
        { SVC_PREVIEW_ORIGIN: "https://previews.example.com:443/", SVC_PREVIEW_PORT: "0" },
        { port: 0, origin: Option.some("https://previews.example.com") },
        "https://previews.example.com"
      ]
    ] as const
  )("%j: previews on %j, URLs at %s", ([env, previews, origin]) =>
    Effect.gen(function*() {
      const loaded = yield* load(env)
      assert.deepStrictEqual(loaded.previews, previews)
      assert.strictEqual(loaded.origin, origin)
    }))

  it.effect("with SVC_PREVIEW_PORT=0 the URLs name the port the listener bound", () =>
    Effect.gen(function*() {
      const origin = yield* PreviewOrigin
      yield* origin.bound(41234)
      assert.strictEqual(yield* origin.current, "http://127.0.0.1:41234")
    }).pipe(
      Effect.provide(PreviewOrigin.layer.pipe(Layer.provideMerge(ServiceConfig.layer))),
      Effect.provide(provider({ SVC_PREVIEW_PORT: "0" }))
    ))

  it.effect.each(
    [
      [
        { SVC_PREVIEW_PORT: "8080" },
        "SVC_PREVIEW_PORT must differ from PORT (8080): previews are served on an origin of their own"
      ],
      [{ SVC_PREVIEW_PORT: "70000" }, "SVC_PREVIEW_PORT must be 0 to 65535, got 70000"],
      [
        { PORT: "65535" },
        "SVC_PREVIEW_PORT: PORT is 65535, so its default (PORT + 1) is no port: set SVC_PREVIEW_PORT"
      ],
      // The API behind a proxy on the port the previews would take by default: the same origin.
      [
        { SVC_PUBLIC_URL: "http://127.0.0.1:8081" },
        "SVC_PREVIEW_PORT: previews would be served on SVC_PUBLIC_URL's origin (http://127.0.0.1:8081); give them an origin of their own"
      ],
      [
        { SVC_PUBLIC_URL: "https://agents.example.com/api", SVC_PREVIEW_ORIGIN: "https://agents.example.com:443" },
        "SVC_PREVIEW_ORIGIN: previews would be served on SVC_PUBLIC_URL's origin (https://agents.example.com); give them an origin of their own"
      ],
      [
        { SVC_PREVIEW_ORIGIN: "https://previews.example.com/app" },
        "SVC_PREVIEW_ORIGIN: expected an http(s)://host[:port] origin, got 'https://previews.example.com/app'"
      ],
      [
        { SVC_PREVIEW_ORIGIN: "previews.example.com" },
        "SVC_PREVIEW_ORIGIN: expected an http(s)://host[:port] origin, got 'previews.example.com'"
      ],
      [{ SVC_PUBLIC_URL: "agents.example.com" }, "SVC_PUBLIC_URL must be an http(s) URL, got 'agents.example.com'"]
    ] as const
  )("%j is refused at start", ([env, message]) =>
    Effect.gen(function*() {
      const error = yield* refusal(env)
      assert.strictEqual(error._tag, "ConfigurationError")
      assert.strictEqual(error.message, message)
    }))
})

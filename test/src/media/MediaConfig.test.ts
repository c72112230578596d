/**
 * The media settings as an operator writes them (SVC_MEDIA_*, ELEVENLABS_*,
 * SVC_MEDIA_PRICES, SVC_MEDIA_STRICT): each kind's route, price and
 * strictness; `none` or unset is an absent kind; a malformed value stops the
 * start with one line naming the setting.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { readMediaConfig } from "../../../src/media/MediaConfig.ts"

const openai = { baseUrl: "https://api.openai.com/v1/", apiKey: Option.some(Redacted.make("sk-openai")) }

const read = (env: Record<string, string>) =>
  readMediaConfig(openai).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))

describe("media settings", () => {
  it.effect("each kind's route, its price per unit and whether strict agents may use it", () =>
    Effect.gen(function*() {
      const config = yield* read({
        SVC_MEDIA_IMAGE: "openai:gpt-image-1",
        SVC_MEDIA_VIDEO: "none",
        SVC_MEDIA_SPEECH: "openai:gpt-4o-mini-tts",
        SVC_MEDIA_MUSIC: "elevenlabs:music_v1",
        SVC_MEDIA_PRICES: "openai:gpt-image-1=4; elevenlabs:music_v1=0.8",
        SVC_MEDIA_STRICT: "image, music",
        ELEVENLABS_API_KEY: "xi-key",
        ELEVENLABS_BASE_URL: "http://eleven.internal:8080/"
      })
      assert.deepStrictEqual(config.routes, {
        image: {
          kind: "image",
          provider: "openai",
          model: "gpt-image-1",
          route: "openai:gpt-image-1",
          centsPerUnit: 4,
          strict: true
        },
        video: null,
        speech: {
          kind: "speech",
          provider: "openai",
          model: "gpt-4o-mini-tts",
          route: "openai:gpt-4o-mini-tts",
          centsPerUnit: null,
          strict: false
        },
        music: {
          kind: "music",
          provider: "elevenlabs",
          model: "music_v1",
          route: "elevenlabs:music_v1",
          centsPerUnit: 0.8,
          strict: true
        },
        soundEffect: null
      })
      assert.strictEqual(config.openai.baseUrl, "https://api.openai.com/v1")
      assert.strictEqual(config.elevenlabs.baseUrl, "http://eleven.internal:8080")
      assert.deepStrictEqual(Option.map(config.elevenlabs.apiKey, Redacted.value), Option.some("xi-key"))
    }))

  it.effect("without settings every kind is absent; ElevenLabs defaults to its public API", () =>
    Effect.gen(function*() {
      const config = yield* read({})
      assert.deepStrictEqual(config.routes, { image: null, video: null, speech: null, music: null, soundEffect: null })
      assert.strictEqual(config.elevenlabs.baseUrl, "https://api.elevenlabs.io")
    }))

  it.effect.each(
    [
      [
        { SVC_MEDIA_IMAGE: "elevenlabs:x" },
        "SVC_MEDIA_IMAGE: expected openai:<model> or none, got 'elevenlabs:x'"
      ],
      [
        { SVC_MEDIA_SOUND_EFFECT: "elevenlabs" },
        "SVC_MEDIA_SOUND_EFFECT: expected elevenlabs:<model> or none, got 'elevenlabs'"
      ],
      [
        { SVC_MEDIA_PRICES: "openai:gpt-image-1=four" },
        "SVC_MEDIA_PRICES: expected <provider>:<model>=<cents per unit>, got 'openai:gpt-image-1=four'"
      ],
      [
        { SVC_MEDIA_STRICT: "images" },
        "SVC_MEDIA_STRICT: 'images' is not a media kind (image, video, speech, music, soundEffect)"
      ],
      [{ ELEVENLABS_BASE_URL: "ftp://x" }, "ELEVENLABS_BASE_URL: expected an http(s) URL, got 'ftp://x'"]
    ] as const
  )("refuses %j", ([env, message]) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(read(env))
      assert.strictEqual(error._tag, "ConfigurationError")
      if (error._tag === "ConfigurationError") assert.strictEqual(error.message, message)
    }))
})

/**
 * The time-based media tools: `generate_video { prompt, seconds?, size?, source? }`
 * (OpenAI's videos job, ./OpenAiVideo.ts), `generate_speech { text, voice?, format? }`
 * (OpenAI's speech), `generate_music { prompt, lengthMs? }` and
 * `generate_sound_effect { text, durationSeconds? }` (ElevenLabs). Each asks
 * the provider for a set length (its defaults below) so the call's price is
 * known before it is sent: a second of video or audio, or 1,000 characters of
 * speech, per the route's price.
 */
import { Effect, Schema } from "effect"
import * as ToolDef from "../tools/ToolDef.ts"
import { NonEmpty, OneOf, optional } from "../tools/ToolInput.ts"
import * as AudioProviders from "./AudioProviders.ts"
import { charge, ensureAffordable, type MediaCall, output, routeOf } from "./MediaOutput.ts"
import * as OpenAiVideo from "./OpenAiVideo.ts"

/** What a call asks for when the model does not say. */
export const Defaults = {
  videoSeconds: 4,
  voice: "alloy",
  format: "mp3",
  musicLengthMs: 30_000,
  soundSeconds: 5
} as const

const Between = (min: number, max: number, description: string) =>
  Schema.Number.check(Schema.isGreaterThanOrEqualTo(min), Schema.isLessThanOrEqualTo(max)).annotate({ description })

export const generateVideo = ToolDef.make({
  name: "generate_video",
  description: "Generate a short video from a prompt (optionally starting from an image: `source`, a workspace " +
    "path, file id or artifact id). It takes minutes; the video is a deliverable for the user, as with generate_image.",
  input: Schema.Struct({
    prompt: NonEmpty("What happens in the video, shot by shot."),
    seconds: optional(
      Schema.Literals([4, 8, 12]).annotate({ description: `Length in seconds (default ${Defaults.videoSeconds}).` })
    ),
    size: optional(OneOf(["720x1280", "1280x720", "1024x1792", "1792x1024"], "Width x height in pixels.")),
    source: optional(NonEmpty("An image the video starts from: workspace path, file id or artifact id."))
  }),
  handler: (input, ctx: MediaCall) =>
    Effect.gen(function*() {
      const { planned, route } = yield* routeOf(ctx, "video")
      const seconds = input.seconds ?? Defaults.videoSeconds
      yield* ensureAffordable(ctx, planned, seconds, `a ${seconds} s video on ${route.route}`)
      const source = input.source === undefined ? undefined : yield* ctx.sources("source", input.source)
      const video = yield* OpenAiVideo.generate(ctx.endpoints.openai, route, {
        prompt: input.prompt,
        seconds,
        size: input.size,
        source
      }, ctx.progress)
      const costCents = yield* charge(ctx, planned, "generate_video", seconds)
      return {
        route: route.route,
        jobId: video.jobId,
        seconds,
        ...(yield* output(ctx, "generate_video", 0, video)),
        costCents
      }
    })
})

export const generateSpeech = ToolDef.make({
  name: "generate_speech",
  description: "Read a text aloud (text to speech). The audio is a deliverable for the user, as with generate_image.",
  input: Schema.Struct({
    text: NonEmpty("What to say, at most 4,096 characters.").check(Schema.isMaxLength(4096)),
    voice: optional(NonEmpty(`The voice (default ${Defaults.voice}; e.g. alloy, echo, fable, onyx, nova, shimmer).`)),
    format: optional(OneOf(["mp3", "opus", "aac", "flac", "wav", "pcm"], `Audio format (default ${Defaults.format}).`))
  }),
  handler: (input, ctx: MediaCall) =>
    Effect.gen(function*() {
      const { planned, route } = yield* routeOf(ctx, "speech")
      const units = input.text.length / 1000
      yield* ensureAffordable(ctx, planned, units, `speech of ${input.text.length} characters on ${route.route}`)
      yield* ctx.progress("Generating speech")
      const audio = yield* AudioProviders.speech(ctx.endpoints.openai, route, {
        text: input.text,
        voice: input.voice ?? Defaults.voice,
        format: input.format ?? Defaults.format
      })
      const costCents = yield* charge(ctx, planned, "generate_speech", units)
      return {
        route: route.route,
        characters: input.text.length,
        ...(yield* output(ctx, "generate_speech", 0, audio)),
        costCents
      }
    })
})

export const generateMusic = ToolDef.make({
  name: "generate_music",
  description:
    "Compose music from a prompt (style, mood, instruments, structure). The audio is a deliverable for the " +
    "user, as with generate_image.",
  input: Schema.Struct({
    prompt: NonEmpty("The music: genre, mood, instruments, tempo, lyrics or none."),
    lengthMs: optional(
      Between(10_000, 300_000, `Length in milliseconds, 10,000 to 300,000 (default ${Defaults.musicLengthMs}).`)
    )
  }),
  handler: (input, ctx: MediaCall) =>
    Effect.gen(function*() {
      const { planned, route } = yield* routeOf(ctx, "music")
      const lengthMs = input.lengthMs ?? Defaults.musicLengthMs
      yield* ensureAffordable(ctx, planned, lengthMs / 1000, `${lengthMs / 1000} s of music on ${route.route}`)
      yield* ctx.progress("Composing music")
      const audio = yield* AudioProviders.music(ctx.endpoints.elevenlabs, route, { prompt: input.prompt, lengthMs })
      const costCents = yield* charge(ctx, planned, "generate_music", lengthMs / 1000)
      return { route: route.route, lengthMs, ...(yield* output(ctx, "generate_music", 0, audio)), costCents }
    })
})

export const generateSoundEffect = ToolDef.make({
  name: "generate_sound_effect",
  description: "Make a sound effect from a description (a door creaking, rain on a tin roof). The audio is a " +
    "deliverable for the user, as with generate_image.",
  input: Schema.Struct({
    text: NonEmpty("The sound, described."),
    durationSeconds: optional(
      Between(0.5, 30, `Length in seconds, 0.5 to 30 (default ${Defaults.soundSeconds}).`)
    )
  }),
  handler: (input, ctx: MediaCall) =>
    Effect.gen(function*() {
      const { planned, route } = yield* routeOf(ctx, "soundEffect")
      const seconds = input.durationSeconds ?? Defaults.soundSeconds
      yield* ensureAffordable(ctx, planned, seconds, `a ${seconds} s sound effect on ${route.route}`)
      yield* ctx.progress("Generating a sound effect")
      const audio = yield* AudioProviders.soundEffect(ctx.endpoints.elevenlabs, route, {
        text: input.text,
        durationSeconds: seconds
      })
      const costCents = yield* charge(ctx, planned, "generate_sound_effect", seconds)
      return {
        route: route.route,
        durationSeconds: seconds,
        ...(yield* output(ctx, "generate_sound_effect", 0, audio)),
        costCents
      }
    })
})

/**
 * The audio routes in their providers' wire shapes: OpenAI's
 * `POST /audio/speech` (model, input, voice, response_format) and ElevenLabs'
 * `POST /v1/music` (prompt, music_length_ms, model_id) and
 * `POST /v1/sound-generation` (text, duration_seconds, model_id), each
 * answering the audio's bytes.
 */
import { Effect } from "effect"
import type { MediaRoute, ProviderEndpoint } from "./MediaConfig.ts"
import * as MediaHttp from "./MediaHttp.ts"

export interface Audio {
  readonly bytes: Uint8Array
  readonly mediaType: string
}

/** OpenAI's response formats and their media types. */
export const SpeechFormats = {
  mp3: "audio/mpeg",
  opus: "audio/ogg",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
  pcm: "audio/pcm"
} as const
export type SpeechFormat = keyof typeof SpeechFormats

const audioOf =
  (fallback: string) => (answer: { readonly bytes: Uint8Array; readonly contentType: string }): Audio => ({
    bytes: answer.bytes,
    mediaType: answer.contentType.startsWith("audio/") ? answer.contentType : fallback
  })

export const speech = (
  endpoint: ProviderEndpoint,
  route: MediaRoute,
  input: { readonly text: string; readonly voice: string; readonly format: SpeechFormat }
) =>
  Effect.map(
    MediaHttp.bytes({
      route: route.route,
      method: "POST",
      url: `${endpoint.baseUrl}/audio/speech`,
      headers: MediaHttp.authorization(endpoint, "bearer"),
      body: { model: route.model, input: input.text, voice: input.voice, response_format: input.format }
    }),
    audioOf(SpeechFormats[input.format])
  )

export const music = (
  endpoint: ProviderEndpoint,
  route: MediaRoute,
  input: { readonly prompt: string; readonly lengthMs: number }
) =>
  Effect.map(
    MediaHttp.bytes({
      route: route.route,
      method: "POST",
      url: `${endpoint.baseUrl}/v1/music`,
      headers: MediaHttp.authorization(endpoint, "xi-api-key"),
      body: { prompt: input.prompt, music_length_ms: input.lengthMs, model_id: route.model }
    }),
    audioOf("audio/mpeg")
  )

export const soundEffect = (
  endpoint: ProviderEndpoint,
  route: MediaRoute,
  input: { readonly text: string; readonly durationSeconds: number }
) =>
  Effect.map(
    MediaHttp.bytes({
      route: route.route,
      method: "POST",
      url: `${endpoint.baseUrl}/v1/sound-generation`,
      headers: MediaHttp.authorization(endpoint, "xi-api-key"),
      body: { text: input.text, duration_seconds: input.durationSeconds, model_id: route.model }
    }),
    audioOf("audio/mpeg")
  )

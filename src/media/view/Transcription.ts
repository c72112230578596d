/**
 * Audio for view_media: transcribed through the run's model provider's
 * transcription endpoint, OpenAI's `POST {OPENAI_BASE_URL}/audio/transcriptions`
 * (multipart: the file, `model` = `transcriptionModel`, `response_format=json`),
 * for agents whose band routes to `openai:`. Anthropic has no transcription
 * endpoint and the scripted model none either: audio on those routes is the
 * tool error `transcription_unavailable`.
 */
import { Duration, Effect, Option, Redacted, Schema } from "effect"
import type { ServiceConfigShape } from "../../config/ServiceConfig.ts"
import { MediaFailed } from "./MediaProcess.ts"
import { viewLimits } from "./ViewLimits.ts"

/** The model asked for on OpenAI-compatible routes (docs/guide/media-view.md). */
export const transcriptionModel = "whisper-1"

export interface Transcriber {
  readonly route: string
  readonly transcribe: (
    audio: { readonly bytes: Uint8Array; readonly filename: string; readonly mediaType: string }
  ) => Effect.Effect<string, MediaFailed>
}

const Answer = Schema.Struct({ text: Schema.String })
const decodeAnswer = Schema.decodeUnknownEffect(Schema.fromJsonString(Answer))

const failed = (message: string) => new MediaFailed({ code: "transcription_failed", message })

/** The transcriber of `route`'s provider, or the reason it has none. */
export const transcriberFor = (
  config: Pick<ServiceConfigShape, "openai">,
  route: string
): Transcriber | string => {
  if (!route.startsWith("openai:")) {
    return `This agent's model route (${route}) has no transcription endpoint: audio can be viewed only on a band routed to an OpenAI-compatible provider (openai:<model>).`
  }
  const url = `${config.openai.baseUrl.replace(/\/+$/, "")}/audio/transcriptions`
  const headers: Record<string, string> = Option.match(config.openai.apiKey, {
    onNone: () => ({}),
    onSome: (key) => ({ authorization: `Bearer ${Redacted.value(key)}` })
  })
  return {
    route,
    transcribe: (audio) =>
      Effect.tryPromise({
        try: async (signal) => {
          const form = new FormData()
          form.append("file", new Blob([Buffer.from(audio.bytes)], { type: audio.mediaType }), audio.filename)
          form.append("model", transcriptionModel)
          form.append("response_format", "json")
          const response = await fetch(url, { method: "POST", headers, body: form, signal })
          return { status: response.status, text: await response.text() }
        },
        catch: (cause) => failed(`The transcription endpoint could not be reached: ${String(cause)}`)
      }).pipe(
        Effect.flatMap(({ status, text }) =>
          status === 200
            ? Effect.map(
              Effect.mapError(decodeAnswer(text), () => failed("The transcription endpoint answered no text.")),
              (answer) => answer.text
            )
            : Effect.fail(failed(`The transcription endpoint answered HTTP ${status}: ${text.slice(0, 300)}`))
        ),
        Effect.timeoutOrElse({
          duration: Duration.millis(viewLimits.modelCallTimeoutMs),
          orElse: () => Effect.fail(failed(`No transcript within ${viewLimits.modelCallTimeoutMs} ms.`))
        })
      )
  }
}

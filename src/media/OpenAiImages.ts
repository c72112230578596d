/**
 * OpenAI's images API in its own wire shape: `POST /images/generations`
 * (JSON: model, prompt, n, size, background) and `POST /images/edits`
 * (multipart: model, prompt, image, mask). Each image of the answer's `data`
 * comes inline (`b64_json`, gpt-image-1's way) or as a `url` (fetched).
 */
import { Effect, Schema } from "effect"
import { sniff } from "../artifacts/MediaSniff.ts"
import type { MediaRoute, ProviderEndpoint } from "./MediaConfig.ts"
import * as MediaHttp from "./MediaHttp.ts"

export interface Image {
  readonly bytes: Uint8Array
  readonly mediaType: string
  readonly revisedPrompt?: string
}

const ImagesAnswer = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    b64_json: Schema.optional(Schema.NullOr(Schema.String)),
    url: Schema.optional(Schema.NullOr(Schema.String)),
    revised_prompt: Schema.optional(Schema.NullOr(Schema.String))
  }))
})

const imageType = (bytes: Uint8Array): string => {
  const sniffed = sniff(bytes)
  return sniffed.startsWith("image/") ? sniffed : "image/png"
}

const imagesOf = (route: MediaRoute, answer: typeof ImagesAnswer.Type) =>
  Effect.forEach(answer.data, (item) =>
    Effect.gen(function*() {
      const bytes = typeof item.b64_json === "string"
        ? new Uint8Array(Buffer.from(item.b64_json, "base64"))
        : typeof item.url === "string"
        ? (yield* MediaHttp.bytes({ route: route.route, method: "GET", url: item.url })).bytes
        : yield* new MediaHttp.GenerationFailed({
          code: "media_provider_error",
          message: `${route.route} answered an image with neither b64_json nor url`
        })
      return {
        bytes,
        mediaType: imageType(bytes),
        ...(typeof item.revised_prompt === "string" ? { revisedPrompt: item.revised_prompt } : {})
      } satisfies Image
    }))

export interface GenerateImage {
  readonly prompt: string
  readonly size?: string | undefined
  readonly count: number
  readonly background?: string | undefined
}

export const generate = (endpoint: ProviderEndpoint, route: MediaRoute, input: GenerateImage) =>
  Effect.flatMap(
    MediaHttp.json({
      route: route.route,
      method: "POST",
      url: `${endpoint.baseUrl}/images/generations`,
      headers: MediaHttp.authorization(endpoint, "bearer"),
      body: {
        model: route.model,
        prompt: input.prompt,
        n: input.count,
        ...(input.size === undefined ? {} : { size: input.size }),
        ...(input.background === undefined ? {} : { background: input.background })
      }
    }, ImagesAnswer),
    (answer) => imagesOf(route, answer)
  )

export interface EditImage {
  readonly prompt: string
  readonly source: { readonly bytes: Uint8Array; readonly mediaType: string; readonly filename: string }
  readonly mask?: { readonly bytes: Uint8Array; readonly mediaType: string; readonly filename: string } | undefined
}

const blob = (file: EditImage["source"]) => new Blob([Buffer.from(file.bytes)], { type: file.mediaType })

export const edit = (endpoint: ProviderEndpoint, route: MediaRoute, input: EditImage) => {
  const form = new FormData()
  form.append("model", route.model)
  form.append("prompt", input.prompt)
  form.append("image", blob(input.source), input.source.filename)
  if (input.mask !== undefined) form.append("mask", blob(input.mask), input.mask.filename)
  return Effect.flatMap(
    MediaHttp.json({
      route: route.route,
      method: "POST",
      url: `${endpoint.baseUrl}/images/edits`,
      headers: MediaHttp.authorization(endpoint, "bearer"),
      body: form
    }, ImagesAnswer),
    (answer) => imagesOf(route, answer)
  )
}

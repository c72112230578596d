/**
 * The HTTP leg of the media providers: requests to an operator-configured
 * endpoint (Node's `fetch`, as for model providers, not the guarded client of
 * user-registered URLs), aborted when the call is interrupted (the step's
 * bound, a run cancelled). A provider's refusal becomes `GenerationFailed` with the
 * provider's own words (`error.message`, or ElevenLabs' `detail`), never the
 * request's credentials.
 */
import { Data, Effect, Option, Redacted, Schema } from "effect"
import { errorText } from "../ErrorText.ts"
import type { ProviderEndpoint } from "./MediaConfig.ts"

/** A generation that failed: the tool's failure code and what the model reads. */
export class GenerationFailed extends Data.TaggedError("GenerationFailed")<{
  readonly code: "media_provider_error" | "media_job_failed" | "media_source_unavailable" | "budget_exceeded"
  readonly message: string
}> {}

export interface MediaRequest {
  /** Names the provider in messages, e.g. `openai:gpt-image-1`. */
  readonly route: string
  readonly method: "GET" | "POST" | "DELETE"
  readonly url: string
  readonly headers?: Readonly<Record<string, string>>
  /** JSON (sent as application/json) or a multipart form. */
  readonly body?: unknown
}

/** The request headers of an endpoint's key: OpenAI's bearer token, ElevenLabs' `xi-api-key`. */
export const authorization = (endpoint: ProviderEndpoint, style: "bearer" | "xi-api-key") =>
  Option.match(endpoint.apiKey, {
    onNone: () => ({}),
    onSome: (key): Record<string, string> =>
      style === "bearer" ? { authorization: `Bearer ${Redacted.value(key)}` } : { "xi-api-key": Redacted.value(key) }
  })

const ErrorBody = Schema.Struct({
  error: Schema.optional(Schema.Union([Schema.String, Schema.Struct({ message: Schema.String })])),
  detail: Schema.optional(Schema.Union([Schema.String, Schema.Struct({ message: Schema.String })]))
})
const decodeError = Schema.decodeUnknownOption(Schema.fromJsonString(ErrorBody))

/** The provider's words for a failed response, or the start of its body. */
const wordsOf = (text: string): string =>
  Option.match(decodeError(text), {
    onNone: () => (text.trim() === "" ? "(empty body)" : text.trim().slice(0, 300)),
    onSome: ({ detail, error }) => {
      const said = error ?? detail
      return said === undefined ? text.trim().slice(0, 300) : typeof said === "string" ? said : said.message
    }
  })

const failed = (message: string) => new GenerationFailed({ code: "media_provider_error", message })

/** The most bytes a provider's answer (a generated file) may have: a larger one is refused as it arrives. */
export const MaxAnswerBytes = 200 * 1024 * 1024

/** The whole body, or undefined past `MaxAnswerBytes` (the rest is not read). */
const readCapped = async (response: Response): Promise<Uint8Array | undefined> => {
  const declared = Number(response.headers.get("content-length") ?? "0")
  if (declared > MaxAnswerBytes) {
    await response.body?.cancel()
    return undefined
  }
  const chunks: Array<Uint8Array> = []
  let total = 0
  const reader = response.body?.getReader()
  while (reader !== undefined) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > MaxAnswerBytes) {
      await reader.cancel()
      return undefined
    }
    chunks.push(value)
  }
  return new Uint8Array(Buffer.concat(chunks))
}

/** Sends the request; a non-2xx answer fails with the provider's words. */
export const send = (request: MediaRequest) =>
  Effect.gen(function*() {
    const headers: Record<string, string> = { ...request.headers }
    let body: string | FormData | null = null
    if (request.body instanceof FormData) body = request.body
    else if (request.body !== undefined) {
      body = JSON.stringify(request.body)
      headers["content-type"] = "application/json"
    }
    const response = yield* Effect.tryPromise({
      try: (signal) => fetch(request.url, { method: request.method, headers, body, signal }),
      catch: (cause) => failed(`${request.route} could not be reached: ${errorText(cause)}`)
    })
    if (response.ok) return response
    const text = yield* Effect.promise(() => response.text().catch(() => ""))
    return yield* failed(`${request.route} answered HTTP ${response.status}: ${wordsOf(text)}`)
  })

/** The answer's JSON decoded with `schema`. */
export const json = <A>(request: MediaRequest, schema: Schema.Decoder<A>) =>
  Effect.gen(function*() {
    const response = yield* send(request)
    const data = yield* Effect.tryPromise({
      try: () => readCapped(response),
      catch: (cause) => failed(`${request.route}'s answer could not be read: ${errorText(cause)}`)
    })
    if (data === undefined) {
      return yield* failed(`${request.route}'s answer is over ${MaxAnswerBytes} bytes; it was not kept`)
    }
    const text = new TextDecoder().decode(data)
    return yield* Schema.decodeUnknownEffect(Schema.fromJsonString(schema))(text).pipe(
      Effect.mapError((e) => failed(`${request.route} answered in an unexpected shape: ${e.message}`))
    )
  })

/** The answer's bytes and its Content-Type. */
export const bytes = (request: MediaRequest) =>
  Effect.gen(function*() {
    const response = yield* send(request)
    const data = yield* Effect.tryPromise({
      try: () => readCapped(response),
      catch: (cause) => failed(`${request.route}'s answer could not be read: ${errorText(cause)}`)
    })
    if (data === undefined) {
      return yield* failed(`${request.route}'s answer is over ${MaxAnswerBytes} bytes; it was not kept`)
    }
    return {
      bytes: data,
      contentType: (response.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase()
    }
  })

/**
 * The HTTP leg the model providers share: POST a JSON body to an
 * operator-configured endpoint (so Node's `fetch`, not the guarded client used
 * for user-registered URLs), retry what is transient, and hand back the
 * response body as Server-Sent Events.
 *
 * Retried, with exponential backoff on the fiber's `Clock` (200 ms × 2^n, at
 * most 4 retries, `Retry-After` seconds honoured): 429, 5xx, and connection
 * failures before the first byte of the body arrived. Once a byte was read the
 * caller may already have emitted events, so a broken stream fails at once.
 * Interrupting the consumer aborts the request or cancels the body read.
 */
import { Array as Arr, Cause, Data, Duration, Effect, Exit, Option, Schedule, Schema, Stream } from "effect"
import * as Sse from "effect/encoding/Sse"
import { errorText } from "../ErrorText.ts"
import { ModelUnavailable } from "./ModelProvider.ts"

export interface ProviderRequest {
  /** Names the provider in error messages, e.g. `openai:gpt-4.1`. */
  readonly route: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

const retryBase = Duration.millis(200)
const maxRetries = 4
/** A provider asking for more than this is treated as asking for this: a run has a clock of its own. */
const maxRetryAfter = Duration.seconds(60)

/** A failure worth another attempt; becomes `ModelUnavailable` when the retries run out. */
class Transient extends Data.TaggedError("Transient")<{
  readonly message: string
  readonly retryAfter: Duration.Duration | undefined
  readonly cause?: unknown
}> {}

type AttemptError = Transient | ModelUnavailable

/** Both OpenAI and Anthropic wrap errors as `{ error: { message } }` (both add `type`, OpenAI `code`). */
const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    message: Schema.String,
    type: Schema.optional(Schema.NullOr(Schema.String)),
    code: Schema.optional(Schema.Unknown)
  })
})
const decodeErrorBody = Schema.decodeUnknownOption(Schema.fromJsonString(ErrorBody))

/**
 * A refusal because the prompt outgrew the context window. OpenAI: 400 with
 * `error.code` `context_length_exceeded`. Anthropic: 400
 * `invalid_request_error` whose message reads "prompt is too long: N tokens >
 * M maximum".
 */
const isContextOverflow = (status: number, text: string): boolean =>
  status === 400 &&
  Option.match(decodeErrorBody(text), {
    onNone: () => false,
    onSome: ({ error }) =>
      error.code === "context_length_exceeded" ||
      (error.type === "invalid_request_error" && /^prompt is too long\b/i.test(error.message))
  })

/** The provider's own words for a failed response, or the start of its body. */
const providerErrorMessage = (text: string): string =>
  Option.match(decodeErrorBody(text), {
    onNone: () => (text.trim() === "" ? "(empty body)" : text.trim().slice(0, 300)),
    onSome: ({ error }) => (error.type ? `${error.type}: ${error.message}` : error.message)
  })

/**
 * The request's own credentials (`Authorization`, with and without `Bearer `,
 * and `x-api-key`) taken out of a provider's words: a misconfigured endpoint
 * may echo the key it was sent, and the message reaches the run's error and the log.
 */
const credentialHeaders = new Set(["authorization", "x-api-key"])
const withoutCredentials = (request: ProviderRequest, text: string): string =>
  Object.entries(request.headers)
    .filter(([name]) => credentialHeaders.has(name.toLowerCase()))
    .flatMap(([, value]) => [value, value.replace(/^Bearer\s+/i, "")])
    .filter((secret) => secret.length >= 8)
    .reduce((out, secret) => out.split(secret).join("[redacted]"), text)

const retryAfterOf = (response: Response): Duration.Duration | undefined => {
  const raw = response.headers.get("retry-after")?.trim()
  if (raw === undefined || !/^\d+(\.\d+)?$/.test(raw)) return undefined
  return Duration.min(Duration.seconds(Number(raw)), maxRetryAfter)
}

const rejected = (request: ProviderRequest, response: Response): Effect.Effect<never, AttemptError> =>
  Effect.tryPromise(() => response.text()).pipe(
    // The status alone still tells what happened; the body only adds the provider's words.
    Effect.catch((e) => Effect.as(Effect.logDebug("the provider's error body could not be read", e), "")),
    Effect.flatMap((text): Effect.Effect<never, AttemptError> => {
      const detail = `${request.route} answered HTTP ${response.status}: ${
        withoutCredentials(request, providerErrorMessage(text))
      }`
      return response.status === 429 || response.status >= 500
        ? Effect.fail(new Transient({ message: detail, retryAfter: retryAfterOf(response) }))
        : Effect.fail(
          new ModelUnavailable({
            message: detail,
            ...(isContextOverflow(response.status, text) ? { contextOverflow: true } : {})
          })
        )
    })
  )

const open = (request: ProviderRequest): Effect.Effect<Response, AttemptError> =>
  Effect.tryPromise({
    try: (signal) =>
      fetch(request.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream", ...request.headers },
        body: JSON.stringify(request.body),
        signal
      }),
    catch: (cause) =>
      new Transient({
        message: `${request.route} could not be reached: ${errorText(cause)}`,
        retryAfter: undefined,
        cause
      })
  }).pipe(Effect.flatMap((response) => (response.ok ? Effect.succeed(response) : rejected(request, response))))

/** One attempt: the response body's bytes. Fails `Transient` only while nothing was received. */
const attempt = (request: ProviderRequest): Stream.Stream<Uint8Array, AttemptError> =>
  Stream.suspend(() => {
    let received = false
    return Stream.unwrap(Effect.map(open(request), ({ body }) =>
      body === null ? Stream.empty : Stream.fromReadableStream<Uint8Array, AttemptError>({
        evaluate: () =>
          body,
        onError: (cause): AttemptError => {
          const message = `${request.route} stream broke: ${errorText(cause)}`
          return received
            ? new ModelUnavailable({ message, cause })
            : new Transient({ message, retryAfter: undefined, cause })
        }
      }))).pipe(
        Stream.map((bytes) => {
          received = true
          return bytes
        })
      )
  })

const retrySchedule = Schedule.exponential(retryBase).pipe(
  Schedule.setInputType<AttemptError>(),
  Schedule.upTo({ times: maxRetries }),
  Schedule.while(({ input }) => input._tag === "Transient"),
  Schedule.modifyDelay(({ input, duration }) =>
    Effect.succeed(input._tag === "Transient" && input.retryAfter !== undefined ? input.retryAfter : duration)
  )
)

/**
 * A batch at a time: each batch the upstream pulls (one network read's worth) becomes one batch of
 * outputs, empty ones skipped. A stream stage per element (`flatMap`, `mapEffect`) costs a sub-stream
 * or a pull per element, several times the work of the parsing itself on a turn's two dozen deltas.
 */
const mapBatches = <A, B, E, E2>(
  self: Stream.Stream<A, E>,
  f: (batch: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E2>
): Stream.Stream<B, E | E2> =>
  self.pipe(
    Stream.mapArrayEffect((batch) => Effect.map(f(batch), (out) => [out] as const)),
    Stream.filter(Arr.isReadonlyArrayNonEmpty),
    Stream.flattenArray
  )

/** Splits decoded text into SSE events; `retry:` directives mean nothing to a one-shot request. */
const sseEvents = <E>(text: Stream.Stream<string, E>, route: string): Stream.Stream<Sse.Event, E | ModelUnavailable> =>
  Stream.suspend(() => {
    let parsed: Array<Sse.Event> = []
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Event") parsed.push(event)
    })
    return mapBatches(text, (chunks) => {
      for (const chunk of chunks) {
        const error = parser.feed(chunk)
        if (error !== undefined) {
          return Effect.fail(new ModelUnavailable({ message: `${route} stream broke: ${error.message}` }))
        }
      }
      const out = parsed
      parsed = []
      return Effect.succeed(out)
    })
  })

/** POSTs `request.body` and streams the response's Server-Sent Events, retrying as described above. */
export const streamEvents = (request: ProviderRequest): Stream.Stream<Sse.Event, ModelUnavailable> =>
  sseEvents(
    attempt(request).pipe(
      Stream.retry(retrySchedule),
      Stream.catchTag("Transient", (error) =>
        Stream.fail(
          new ModelUnavailable({ message: `${error.message} (gave up after ${maxRetries + 1} attempts)`, cause: error })
        )),
      Stream.decodeText
    ),
    request.route
  )

/**
 * Decodes one event's JSON `data`; anything else is an unusable answer. To an Exit rather than an
 * Effect (measured alone, 22 against 31 µs an event on the loaded bench host; Schema runs each such
 * decode in a short fiber of its own, so in a whole turn it evens out: see bench/README.md).
 */
export const decodeData = <A>(schema: Schema.Decoder<A>, route: string) => {
  const decode = Schema.decodeUnknownExit(Schema.fromJsonString(schema))
  return (event: Sse.Event): Effect.Effect<A, ModelUnavailable> => {
    const exit = decode(event.data)
    return Exit.isSuccess(exit) ? Effect.succeed(exit.value) : Effect.fail(
      new ModelUnavailable({
        message: `${route} sent an unreadable ${event.event} event: ${errorText(Cause.squash(exit.cause))}`
      })
    )
  }
}

/**
 * A provider's model events: `feed` turns each server-sent event into model events (it may keep state
 * across events), `complete` says what is left once the body ended; the events go through a batch at a time.
 */
export const modelEvents = <M>(
  events: Stream.Stream<Sse.Event, ModelUnavailable>,
  decoder: {
    readonly feed: (event: Sse.Event) => Effect.Effect<ReadonlyArray<M>, ModelUnavailable>
    readonly complete: Effect.Effect<ReadonlyArray<M>, ModelUnavailable>
  }
): Stream.Stream<M, ModelUnavailable> =>
  mapBatches(events, (batch) => Effect.map(Effect.forEach(batch, decoder.feed), (outs) => outs.flat())).pipe(
    Stream.concat(mapBatches(Stream.make(undefined), () => decoder.complete))
  )

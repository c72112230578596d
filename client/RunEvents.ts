/**
 * A run's stream as a client reads it: the SSE frames of the AI SDK UI
 * message stream, each chunk decoded with the contract's chunk union
 * (domain/Chunk.ts) and kept with its frame id. A stream cut short (the
 * connection broke, the node serving it stopped) is resumed by asking again
 * with `Last-Event-ID: <last id received>`, so the reader sees every chunk
 * once, in order: no duplicate, no gap. Reconnecting is immediate after a
 * connection that made progress and backs off otherwise, up to a bound.
 */
import { Duration, Effect, Result, Schema, Stream } from "effect"
import { Sse } from "effect/encoding"
import type { HttpClientResponse } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Chunk, isFinalEnd } from "../domain/Chunk.ts"
import { RunId, type ThreadId } from "../domain/Ids.ts"
import type { MessageInput } from "../domain/Run.ts"
import { Api } from "../http/Api.ts"
import { ClientError, type Failure, isRetryable, normalized } from "./Failures.ts"
import type { ApiClient } from "./ServiceClient.ts"

/** A chunk with its frame id (the run's sequence number, the value `Last-Event-ID` takes). */
export interface RunEvent {
  readonly id: number
  readonly chunk: Chunk
}

export interface FollowOptions {
  /** Start after this frame id (absent or 0: from the run's first chunk). */
  readonly lastEventId?: number | undefined
  /**
   * Keep following when the run parks on an approval or a question, until
   * its final end. By default the stream ends where the turn ends (a park or the run's end).
   */
  readonly followParks?: boolean | undefined
  /** Connection attempts in a row without a new chunk before giving up (default 8). */
  readonly maxAttempts?: number | undefined
}

type Frame = RunEvent | "done"

const decodeChunk = Schema.decodeUnknownEffect(Schema.fromJsonString(Chunk))

const invalid = (message: string) => new ClientError({ kind: "invalid_response", message })

const frame = (event: Sse.Event): Effect.Effect<Frame, ClientError> => {
  if (event.data === "[DONE]") return Effect.succeed("done")
  const id = Number(event.id)
  if (!Number.isSafeInteger(id) || id < 1) {
    return Effect.fail(invalid(`A stream frame without a valid id: '${event.id}'.`))
  }
  return decodeChunk(event.data).pipe(
    Effect.map((chunk) => ({ id, chunk })),
    Effect.mapError((e) => invalid(`A stream chunk the contract does not know: ${e.message}`))
  )
}

/** The frames of one SSE response; ends quietly where the connection broke. */
const frames = (response: HttpClientResponse.HttpClientResponse): Stream.Stream<Frame, ClientError> =>
  response.stream.pipe(
    Stream.decodeText,
    Stream.pipeThroughChannel(Sse.decode()),
    Stream.catchTag("SseError", (e) => Stream.fail(invalid(e.message))),
    // A body that stops being readable is a cut: the caller resumes after the last frame read.
    Stream.catchTags({ HttpClientError: () => Stream.empty, Retry: () => Stream.empty }),
    Stream.mapEffect(frame)
  )

const decodeStreamAnswer = HttpApiClient.decodeResponse(Api, { group: "runs", endpoint: "stream" })
const decodeMessageAnswer = HttpApiClient.decodeResponse(Api, { group: "runs", endpoint: "message" })

/** The response when it is the stream; else its envelope (or what else it was) as the failure. */
const streamOrFailure = <E>(
  response: HttpClientResponse.HttpClientResponse,
  decode: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<unknown, E>
): Effect.Effect<HttpClientResponse.HttpClientResponse, E | ClientError> => {
  const type = response.headers["content-type"] ?? ""
  if (response.status === 200 && type.startsWith("text/event-stream")) return Effect.succeed(response)
  return Effect.flatMap(
    decode(response),
    () => Effect.fail(invalid(`Expected the run's stream, got ${response.status} ${type}.`))
  )
}

/** `GET /v1/runs/:id/stream` after `cursor`. */
const openStream =
  (api: ApiClient, runId: RunId) => (cursor: number): Effect.Effect<HttpClientResponse.HttpClientResponse, Failure> =>
    api.runs.stream({
      params: { id: runId },
      headers: cursor > 0 ? { "last-event-id": String(cursor) } : {},
      responseMode: "response-only"
    }).pipe(Effect.flatMap((response) => streamOrFailure(response, decodeStreamAnswer)), normalized)

const pause = (failures: number) => Effect.sleep(Duration.millis(Math.min(5_000, 250 * 2 ** failures)))

/**
 * The events of the connections `connect` opens: the first after
 * `options.lastEventId`, each later one after the last frame received.
 */
export const resumable = (
  connect: (cursor: number) => Effect.Effect<HttpClientResponse.HttpClientResponse, Failure>,
  options: FollowOptions = {}
): Stream.Stream<RunEvent, Failure> =>
  Stream.suspend(() => {
    const maxAttempts = options.maxAttempts ?? 8
    let cursor = options.lastEventId ?? 0
    let finalEnd = false

    const retry = (failures: number, failure: Failure): Stream.Stream<RunEvent, Failure> =>
      failures + 1 >= maxAttempts
        ? Stream.fail(failure)
        : Stream.unwrap(Effect.as(pause(failures), attempt(failures + 1)))

    const attempt = (failures: number): Stream.Stream<RunEvent, Failure> =>
      Stream.unwrap(Effect.gen(function*() {
        const opened = yield* Effect.result(connect(cursor))
        if (Result.isFailure(opened)) {
          return isRetryable(opened.failure) ? retry(failures, opened.failure) : Stream.fail(opened.failure)
        }
        const start = cursor
        let done = false
        const events = frames(opened.success).pipe(
          Stream.filter((f): f is RunEvent => {
            if (f === "done") {
              done = true
              return false
            }
            // Frames come in id order; one at or before the cursor was already delivered.
            if (f.id <= cursor) return false
            cursor = f.id
            finalEnd = isFinalEnd(f.chunk)
            return true
          })
        )
        return Stream.concat(events, Stream.suspend(() => afterwards(start, failures, done)))
      }))

    const afterwards = (start: number, failures: number, done: boolean): Stream.Stream<RunEvent, Failure> => {
      const progressed = cursor > start
      if (finalEnd) return Stream.empty
      // `[DONE]`: the turn ended. Following parks means asking again after it (the service waits for what comes next).
      if (done) return options.followParks === true && progressed ? attempt(0) : Stream.empty
      if (progressed) return attempt(0)
      return retry(
        failures,
        new ClientError({
          kind: "connection",
          message: `The run's stream broke ${failures + 1} times in a row without a new chunk.`
        })
      )
    }

    return attempt(0)
  })

/** A run's events, from the start or after `options.lastEventId`. */
export const follow = (api: ApiClient, runId: RunId, options: FollowOptions = {}): Stream.Stream<RunEvent, Failure> =>
  resumable(openStream(api, runId), options)

/** Only the chunks: what `readUIMessageStream` and `useChat` consume. */
export const chunks = <E, R>(events: Stream.Stream<RunEvent, E, R>): Stream.Stream<Chunk, E, R> =>
  Stream.map(events, (event) => event.chunk)

const decodeRunId = Schema.decodeUnknownOption(RunId)

export interface SendOptions extends FollowOptions {
  /** Sent as `Idempotency-Key`: a retried send starts no second run. */
  readonly idempotencyKey?: string | undefined
}

/**
 * `POST /v1/threads/:id/messages`, answered with the run's stream: the run id
 * (header `svc-run-id`) once the service accepted the message, and its
 * events, read from that same response and resumed with `GET /v1/runs/:id/stream`.
 */
export const send = (api: ApiClient, threadId: ThreadId, input: MessageInput, options: SendOptions = {}) =>
  Effect.gen(function*() {
    const key = options.idempotencyKey
    const response = yield* api.runs.message({
      params: { id: threadId },
      payload: input,
      headers: key === undefined
        ? { accept: "text/event-stream" }
        : { accept: "text/event-stream", "idempotency-key": key },
      responseMode: "response-only"
    }).pipe(Effect.flatMap((r) => streamOrFailure(r, decodeMessageAnswer)), normalized)
    const runId = yield* Effect.fromOption(decodeRunId(response.headers["svc-run-id"])).pipe(
      Effect.mapError(() => invalid("The stream of a new run came without its svc-run-id header."))
    )
    let first: HttpClientResponse.HttpClientResponse | undefined = response
    const connect = (cursor: number) => {
      const answer = first
      first = undefined
      return answer === undefined ? openStream(api, runId)(cursor) : Effect.succeed(answer)
    }
    return { runId, events: resumable(connect, options) }
  })

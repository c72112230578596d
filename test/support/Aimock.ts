/**
 * aimock (`@copilotkit/aimock`) as the model providers' real peer: one LLMock
 * server per test (closed with its scope) that demands an API key, its
 * request journal read over HTTP, a pass-through proxy that records the raw
 * requests (aimock journals Anthropic requests already translated to the
 * OpenAI shape, and redacts credentials), and a probe on the test clock that
 * reports each backoff sleep as it starts, so a test advances `TestClock` by
 * exactly that much, once the retry is actually waiting.
 */
import { LLMock } from "@copilotkit/aimock"
import { Clock, type Duration, Effect, Queue, Redacted, Schema, type Scope } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { listen } from "./HttpPeer.ts"

export const apiKey = "sk-aimock-test-key"
export const redactedKey = Redacted.make(apiKey)

const JournalEntry = Schema.Struct({
  method: Schema.String,
  path: Schema.String,
  headers: Schema.Record(Schema.String, Schema.String),
  body: Schema.Unknown,
  response: Schema.Struct({ status: Schema.Number })
})
export type JournalEntry = typeof JournalEntry.Type
const decodeJournal = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Array(JournalEntry)))

export interface Aimock {
  readonly mock: LLMock
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** `GET /__aimock/journal`: every request aimock answered, in order. */
  readonly journal: Effect.Effect<ReadonlyArray<JournalEntry>>
}

/** A started LLMock with the fixtures `configure` registers. */
export const aimock = (configure: (mock: LLMock) => void): Effect.Effect<Aimock, never, Scope.Scope> =>
  Effect.gen(function*() {
    const mock = new LLMock({ port: 0, auth: { apiKeys: [apiKey] } })
    configure(mock)
    yield* Effect.acquireRelease(Effect.promise(() => mock.start()), () => Effect.promise(() => mock.stop()))
    const journal = Effect.promise(async () => {
      const response = await fetch(`${mock.url}/__aimock/journal`, { headers: { authorization: `Bearer ${apiKey}` } })
      return response.text()
    }).pipe(Effect.flatMap(decodeJournal), Effect.orDie)
    return { mock, url: mock.url, journal }
  })

export interface Recorded {
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: unknown
}

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>`; paths are forwarded unchanged to the target. */
  readonly url: string
  readonly requests: () => ReadonlyArray<Recorded>
}

const decodeBody = Schema.decodeUnknownSync(Schema.fromJsonString(Schema.Unknown))

/** Forwards every request to `target` and answers with its response, keeping what was sent. */
export const recordingProxy = (target: string): Effect.Effect<RecordingProxy, never, Scope.Scope> =>
  Effect.gen(function*() {
    const requests: Array<Recorded> = []
    const forward = async (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Array<Buffer> = []
      for await (const chunk of req) chunks.push(Buffer.from(chunk))
      const text = Buffer.concat(chunks).toString("utf8")
      requests.push({ path: req.url ?? "/", headers: req.headers, body: decodeBody(text) })
      const headers = new Headers()
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string" && name !== "host" && name !== "content-length") headers.set(name, value)
      }
      const upstream = await fetch(`${target}${req.url ?? "/"}`, { method: req.method ?? "POST", headers, body: text })
      const body = Buffer.from(await upstream.arrayBuffer())
      res.writeHead(upstream.status, {
        "content-type": upstream.headers.get("content-type") ?? "application/octet-stream"
      })
      res.end(body)
    }
    const port = yield* listen((req, res) => {
      forward(req, res).catch(() => res.destroy())
    })
    return { url: `http://127.0.0.1:${port}`, requests: () => [...requests] }
  })

export interface SleepProbe {
  /** The test clock, reporting every sleep before it starts waiting. */
  readonly clock: Clock.Clock
  /** The next sleep's duration; waits until one is requested. */
  readonly nextSleep: Effect.Effect<Duration.Duration>
}

/**
 * Provide `probe.clock` to the code under test; `TestClock.adjust` from the
 * test as usual. Only the sleeps `reports` picks are reported (to single out
 * retry backoffs among a whole service's timers); the others just sleep.
 */
export const sleepProbeWhere = (reports: (duration: Duration.Duration) => boolean): Effect.Effect<SleepProbe> =>
  Effect.gen(function*() {
    const inner = yield* Clock.clockWith(Effect.succeed)
    const sleeps = yield* Queue.unbounded<Duration.Duration>()
    const clock: Clock.Clock = {
      currentTimeMillisUnsafe: () => inner.currentTimeMillisUnsafe(),
      currentTimeMillis: inner.currentTimeMillis,
      currentTimeNanosUnsafe: () => inner.currentTimeNanosUnsafe(),
      currentTimeNanos: inner.currentTimeNanos,
      monotonicTimeNanosUnsafe: () => inner.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: inner.monotonicTimeNanos,
      // The offer wakes the test only after this fiber has registered the sleep
      // (the registration is synchronous; the test's fiber runs later).
      sleep: (duration) =>
        reports(duration) ? Effect.andThen(Queue.offer(sleeps, duration), inner.sleep(duration)) : inner.sleep(duration)
    }
    return { clock, nextSleep: Queue.take(sleeps) }
  })

/** A probe reporting every sleep. */
export const sleepProbe: Effect.Effect<SleepProbe> = sleepProbeWhere(() => true)

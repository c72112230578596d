/**
 * Retries of the model providers (ProviderHttp), one table over both
 * providers against aimock over real HTTP: 429 after its Retry-After, 5xx
 * with exponential backoff until it gives up, a connection dropped before any
 * byte; never a 4xx, nor a stream that broke after events (the caller may
 * have shown them). Each backoff is let through on TestClock as it starts, so
 * the table reads the exact waits. The wire shapes are each provider's own
 * test file's (OpenAiModel.test.ts, AnthropicModel.test.ts).
 */
import type { LLMock } from "@copilotkit/aimock"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Redacted, Stream } from "effect"
import { TestClock } from "effect/testing"
import { makeAnthropicModel } from "../../../src/model/AnthropicModel.ts"
import { ModelEvent, type ModelProvider } from "../../../src/model/ModelProvider.ts"
import { makeOpenAiModel } from "../../../src/model/OpenAiModel.ts"
import { aimock, apiKey, redactedKey, sleepProbe } from "../../support/Aimock.ts"

interface Provider {
  readonly name: string
  readonly make: (baseUrl: string, key: Redacted.Redacted) => ModelProvider
  /** aimock's usage fixture in the provider's own field names. */
  readonly usage: (input: number, output: number) => Record<string, number>
  /** The credential header's value, as a misconfigured endpoint may echo it. */
  readonly credential: string
}

const providers: ReadonlyArray<Provider> = [
  {
    name: "openai",
    make: (baseUrl, key) => makeOpenAiModel({ model: "gpt-4.1", baseUrl, apiKey: key }),
    usage: (input, output) => ({ prompt_tokens: input, completion_tokens: output }),
    credential: `Bearer ${apiKey}`
  },
  {
    name: "anthropic",
    make: (baseUrl, key) => makeAnthropicModel({ model: "claude-sonnet-4-5", baseUrl, apiKey: key }),
    usage: (input, output) => ({ input_tokens: input, output_tokens: output }),
    credential: apiKey
  }
]

type Expected =
  /** The stream ends with exactly these events. */
  | { readonly _tag: "Events"; readonly events: ReadonlyArray<ModelEvent> }
  /** The stream ends, its text deltas reading this. */
  | { readonly _tag: "Text"; readonly text: string }
  /** ModelUnavailable with this message (a pattern: its start); `partial`: events arrived first, no Finish. */
  | { readonly _tag: "Fails"; readonly message: (route: string) => string | RegExp; readonly partial?: boolean }

interface Case {
  readonly name: string
  readonly fixtures: (mock: LLMock, provider: Provider) => void
  /** The user message asked (the fixtures match on it). */
  readonly ask: string
  readonly key?: Redacted.Redacted
  /** The backoffs (ms) slept before each retry, in order. */
  readonly backoffs: ReadonlyArray<number>
  readonly expected: Expected
  /** The statuses aimock answered, in order (undefined: not asserted). */
  readonly statuses?: ReadonlyArray<number>
}

const gaveUp = [200, 400, 800, 1600]
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const persistent = (status: number, type: string, message: string): Case => ({
  name: `a persistent ${status} backs off exponentially, then ends in ModelUnavailable naming the status and message`,
  fixtures: (mock) => mock.onMessage("hello", { error: { message, type }, status }),
  ask: "hello",
  backoffs: gaveUp,
  expected: {
    _tag: "Fails",
    message: (route) => `${route} answered HTTP ${status}: ${type}: ${message} (gave up after 5 attempts)`
  },
  statuses: [status, status, status, status, status]
})

const cases: ReadonlyArray<Case> = [
  {
    name: "a 429 is retried after its Retry-After, on the clock",
    fixtures: (mock, provider) => {
      mock.nextRequestError(429, { message: "Rate limit reached for requests", type: "rate_limit_error" })
      mock.onMessage("hello", { content: "Hi!", usage: provider.usage(3, 1) })
    },
    ask: "hello",
    backoffs: [1000], // aimock's Retry-After: 1
    expected: {
      _tag: "Events",
      events: [
        ModelEvent.TextDelta({ text: "Hi!" }),
        ModelEvent.Finish({ reason: "stop", inputTokens: 3, outputTokens: 1 })
      ]
    },
    statuses: [429, 200]
  },
  persistent(500, "server_error", "The server had an error"),
  persistent(529, "overloaded_error", "Overloaded"),
  {
    name: "a connection dropped before any byte is retried after the first backoff",
    fixtures: (mock) => {
      mock.on({ userMessage: "flaky", sequenceIndex: 0 }, { content: "never sent" }, { chaos: { disconnectRate: 1 } })
      mock.onMessage("flaky", { content: "Second time lucky." })
    },
    ask: "flaky",
    backoffs: [200],
    expected: { _tag: "Text", text: "Second time lucky." },
    // aimock journals the dropped request with status 0.
    statuses: [0, 200]
  },
  {
    name: "a 400 is not retried",
    fixtures: (mock) => {
      mock.nextRequestError(400, { message: "max_tokens: must be at most 8192", type: "invalid_request_error" })
      mock.onMessage("hello", { content: "Hi!" })
    },
    ask: "hello",
    backoffs: [],
    expected: {
      _tag: "Fails",
      message: (route) => `${route} answered HTTP 400: invalid_request_error: max_tokens: must be at most 8192`
    },
    statuses: [400]
  },
  {
    name: "a refused key (401) is not retried",
    fixtures: (mock) => mock.onMessage("hello", { content: "Hi!" }),
    ask: "hello",
    key: Redacted.make("sk-wrong"),
    backoffs: [],
    expected: {
      _tag: "Fails",
      message: (route) => `${route} answered HTTP 401: authentication_error: Invalid API key`
    }
    // No statuses: aimock does not journal a request it refuses for its key.
  },
  {
    name: "a provider echoing the credential it was sent: not retried, the key never reaches the message",
    fixtures: (mock, provider) =>
      mock.nextRequestError(403, {
        message: `Key ${provider.credential} may not use this model`,
        type: "permission_error"
      }),
    ask: "hello",
    backoffs: [],
    expected: {
      _tag: "Fails",
      message: (route) => `${route} answered HTTP 403: permission_error: Key [redacted] may not use this model`
    },
    statuses: [403]
  },
  {
    name: "a stream that breaks after events fails at once, without a retry",
    fixtures: (mock) =>
      // Unpaced, aimock would write and destroy in one tick and no byte would leave; 1 ms lets the first chunks out.
      mock.onMessage("long", { content: "A long answer that will not arrive whole." }, {
        chunkSize: 4,
        truncateAfterChunks: 4,
        latency: 1
      }),
    ask: "long",
    backoffs: [],
    expected: { _tag: "Fails", message: (route) => new RegExp(`^${escaped(route)} stream broke: `), partial: true },
    statuses: [200]
  }
]

const text = (events: ReadonlyArray<ModelEvent>) =>
  events.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")

const rows = providers.flatMap((provider) =>
  cases.map((c) => ({ ...c, provider, title: `${provider.name}: ${c.name}` }))
)

describe("ProviderRetry", () => {
  it.effect.each(rows)("$title", ({ provider, ...c }) =>
    Effect.gen(function*() {
      const peer = yield* aimock((mock) => c.fixtures(mock, provider))
      const model = provider.make(`${peer.url}/v1`, c.key ?? redactedKey)
      const probe = yield* sleepProbe
      const seen: Array<ModelEvent> = []
      const fiber = yield* model.stream({
        system: "You are terse.",
        messages: [{ role: "user", content: c.ask }],
        tools: [],
        outputSchema: undefined
      }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.result,
        Effect.provideService(Clock.Clock, probe.clock),
        Effect.forkChild
      )
      const backoffs: Array<number> = []
      for (let retry = 0; retry < c.backoffs.length; retry++) {
        const backoff = yield* probe.nextSleep
        backoffs.push(Duration.toMillis(backoff))
        yield* TestClock.adjust(backoff)
      }
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual(backoffs, c.backoffs)

      const expected = c.expected
      if (expected._tag === "Fails") {
        assert.strictEqual(result._tag, "Failure", JSON.stringify(seen))
        const error = result._tag === "Failure" ? result.failure : undefined
        assert.strictEqual(error?._tag, "ModelUnavailable")
        const message = expected.message(model.route)
        if (typeof message === "string") assert.strictEqual(error?.message, message)
        else assert.match(error?.message ?? "", message)
        assert.strictEqual(text(seen).length > 0, expected.partial === true)
        assert.isFalse(seen.some((event) => event._tag === "Finish"))
      } else {
        assert.strictEqual(result._tag, "Success", result._tag === "Failure" ? result.failure.message : "")
        if (expected._tag === "Events") assert.deepStrictEqual(seen, expected.events)
        else assert.strictEqual(text(seen), expected.text)
      }
      if (c.statuses !== undefined) {
        assert.deepStrictEqual((yield* peer.journal).map((entry) => entry.response.status), c.statuses)
      }
    }))
})

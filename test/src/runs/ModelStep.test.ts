/**
 * One model step on its own: a provider's events become the exact chunks
 * stored in the run's log (one text part under one id, reasoning only with
 * streamReasoning), tool calls and tokens are collected, a held writer is
 * released by the first answer, ModelUnavailable propagates, and addUsage adds
 * a step to the run's totals at a price. Providers are the scripted model or
 * a stream of ModelEvents written here (our own interface).
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Stream } from "effect"
import type { Chunk } from "../../../domain/Chunk.ts"
import type { RunId } from "../../../domain/Ids.ts"
import { ZeroUsage } from "../../../domain/Run.ts"
import { IdGenerator } from "../../../src/IdGenerator.ts"
import {
  estimateTokens,
  type ModelEvent,
  type ModelProvider,
  type ModelRequest,
  ModelUnavailable
} from "../../../src/model/ModelProvider.ts"
import { ScriptedModel } from "../../../src/model/ScriptedModel.ts"
import { EventLog } from "../../../src/runs/EventLog.ts"
import * as ModelStep from "../../../src/runs/ModelStep.ts"
import * as RunStage from "../../support/RunStage.ts"

/** A provider that streams `events`, then fails with `failure` when given. */
const providerOf = (events: ReadonlyArray<ModelEvent>, failure?: string): ModelProvider => ({
  route: "test",
  stream: () =>
    failure === undefined
      ? Stream.fromIterable(events)
      : Stream.concat(Stream.fromIterable(events), Stream.fail(new ModelUnavailable({ message: failure })))
})

const requestFor = (text: string): ModelRequest => ({
  system: "You are terse.",
  messages: [{ role: "user", content: text }],
  tools: [],
  outputSchema: undefined
})

const text = (t: string): ModelEvent => ({ _tag: "TextDelta", text: t })
const reasoning = (t: string): ModelEvent => ({ _tag: "ReasoningDelta", text: t })
const finish = (reason: "stop" | "tool-calls", inputTokens: number, outputTokens: number): ModelEvent => ({
  _tag: "Finish",
  reason,
  inputTokens,
  outputTokens
})

/** A fresh run's writer; runs the step; returns its result and every chunk stored (sequence numbers checked). */
const step = (model: ModelProvider, request: ModelRequest, streamReasoning: boolean, callIdSeed = "run_test:0") =>
  Effect.gen(function*() {
    const events = yield* EventLog
    const row = yield* RunStage.stageRun()
    const writer = yield* events.writer(row.id, { fresh: true })
    const result = yield* ModelStep.run(model, request, writer, streamReasoning, yield* IdGenerator, callIdSeed)
    yield* writer.flush
    return { result, chunks: yield* storedChunks(row.id) }
  })

const storedChunks = (runId: RunId) =>
  Effect.gen(function*() {
    const stored = yield* (yield* EventLog).read(runId, 0)
    assert.deepStrictEqual(stored.map((s) => s.seq), stored.map((_, i) => i + 1))
    return stored.map((s): Chunk => s.chunk)
  })

/** The id of the first chunk of `type` (the part's id). */
const idOf = (chunks: ReadonlyArray<Chunk>, type: "text-start" | "reasoning-start"): string => {
  const found = chunks.find((c) => c.type === type)
  return found !== undefined && "id" in found && typeof found.id === "string" ? found.id : ""
}

layer(RunStage.layer, { timeout: RunStage.setupTimeout })("ModelStep", (it) => {
  it.effect("text deltas become one text part: text-start, each delta, text-end under one txt_ id; text and tokens returned", () =>
    Effect.gen(function*() {
      const { result, chunks } = yield* step(
        providerOf([text("Hello "), text("world"), finish("stop", 12, 3)]),
        requestFor("hi"),
        false
      )
      const id = idOf(chunks, "text-start")
      assert.match(id, /^txt_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(chunks, [
        { type: "text-start", id },
        { type: "text-delta", id, delta: "Hello " },
        { type: "text-delta", id, delta: "world" },
        { type: "text-end", id }
      ])
      assert.deepStrictEqual(result, { text: "Hello world", calls: [], tokens: { inputTokens: 12, outputTokens: 3 } })
    }))

  it.effect("with streamReasoning, reasoning is its own rs_ part that ends where the answer's text begins", () =>
    Effect.gen(function*() {
      const model = providerOf([reasoning("Let me "), reasoning("think."), text("Answer."), finish("stop", 20, 2)])
      const { result, chunks } = yield* step(model, requestFor("hi"), true)
      const r = idOf(chunks, "reasoning-start")
      const t = idOf(chunks, "text-start")
      assert.match(r, /^rs_[0-9A-Za-z]{22}$/)
      assert.match(t, /^txt_[0-9A-Za-z]{22}$/)
      assert.deepStrictEqual(chunks, [
        { type: "reasoning-start", id: r },
        { type: "reasoning-delta", id: r, delta: "Let me " },
        { type: "reasoning-delta", id: r, delta: "think." },
        { type: "reasoning-end", id: r },
        { type: "text-start", id: t },
        { type: "text-delta", id: t, delta: "Answer." },
        { type: "text-end", id: t }
      ])
      // Reasoning is never part of the answer's text.
      assert.deepStrictEqual(result, { text: "Answer.", calls: [], tokens: { inputTokens: 20, outputTokens: 2 } })
    }))

  it.effect("without streamReasoning, reasoning writes nothing", () =>
    Effect.gen(function*() {
      const model = providerOf([reasoning("secret "), reasoning("thoughts"), text("Answer."), finish("stop", 20, 2)])
      const { result, chunks } = yield* step(model, requestFor("hi"), false)
      const t = idOf(chunks, "text-start")
      assert.deepStrictEqual(chunks, [
        { type: "text-start", id: t },
        { type: "text-delta", id: t, delta: "Answer." },
        { type: "text-end", id: t }
      ])
      assert.strictEqual(result.text, "Answer.")
    }))

  it.effect("tool calls are collected in order and write no chunks (the loop announces them)", () =>
    Effect.gen(function*() {
      const model = providerOf([
        { _tag: "ToolCall", id: "call_1_1", name: "mcp__files__read", input: { path: "a.txt" } },
        { _tag: "ToolCall", id: "call_1_2", name: "mcp__files__read", input: { path: "b.txt" } },
        finish("tool-calls", 40, 9)
      ])
      const { result, chunks } = yield* step(model, requestFor("read both"), true)
      assert.deepStrictEqual(chunks, [])
      // Each call under a tc_ id of the service's own, the provider's id kept beside it for the provider.
      const [a, b] = result.calls.map((c) => c.id)
      assert.match(a, /^tc_[0-9A-Za-z]{22}$/)
      assert.match(b, /^tc_[0-9A-Za-z]{22}$/)
      assert.notStrictEqual(a, b)
      assert.deepStrictEqual(result, {
        text: "",
        calls: [
          { id: a, providerId: "call_1_1", name: "mcp__files__read", input: { path: "a.txt" } },
          { id: b, providerId: "call_1_2", name: "mcp__files__read", input: { path: "b.txt" } }
        ],
        tokens: { inputTokens: 40, outputTokens: 9 }
      })
      // A step replayed (after a crash) calls with the same ids; another step with others.
      const again = yield* step(model, requestFor("read both"), true)
      assert.deepStrictEqual(again.result.calls.map((c) => c.id), [a, b])
      const other = yield* step(model, requestFor("read both"), true, "run_test:1")
      assert.notStrictEqual(other.result.calls[0]?.id, a)
    }))

  it.effect("text and a tool call in one step: the text part and the call", () =>
    Effect.gen(function*() {
      const model = providerOf([
        text("Reading it."),
        { _tag: "ToolCall", id: "call_1", name: "mcp__files__read", input: {} },
        finish("tool-calls", 5, 6)
      ])
      const { result, chunks } = yield* step(model, requestFor("read"), false)
      const t = idOf(chunks, "text-start")
      assert.deepStrictEqual(chunks, [
        { type: "text-start", id: t },
        { type: "text-delta", id: t, delta: "Reading it." },
        { type: "text-end", id: t }
      ])
      assert.deepStrictEqual(result, {
        text: "Reading it.",
        calls: [{ id: result.calls[0].id, providerId: "call_1", name: "mcp__files__read", input: {} }],
        tokens: { inputTokens: 5, outputTokens: 6 }
      })
    }))

  it.effect("the scripted model: word deltas, reasoning from /reason, its estimated tokens", () =>
    Effect.gen(function*() {
      const request = requestFor("/reason Think first\n/text Hello there")
      const { result, chunks } = yield* step(ScriptedModel, request, true)
      const r = idOf(chunks, "reasoning-start")
      const t = idOf(chunks, "text-start")
      assert.deepStrictEqual(chunks, [
        { type: "reasoning-start", id: r },
        { type: "reasoning-delta", id: r, delta: "Think " },
        { type: "reasoning-delta", id: r, delta: "first" },
        { type: "reasoning-end", id: r },
        { type: "text-start", id: t },
        { type: "text-delta", id: t, delta: "Hello " },
        { type: "text-delta", id: t, delta: "there" },
        { type: "text-end", id: t }
      ])
      const inputTokens = estimateTokens(
        request.system + JSON.stringify(request.messages) + JSON.stringify(request.tools)
      )
      assert.deepStrictEqual(result, { text: "Hello there", calls: [], tokens: { inputTokens, outputTokens: 3 } })
    }))

  it.effect("a held writer is released by the model's first answer: the step's opening goes out with it, before the step ends", () =>
    Effect.gen(function*() {
      const events = yield* EventLog
      const row = yield* RunStage.stageRun()
      const writer = yield* events.writer(row.id, { fresh: true })
      const more = yield* Deferred.make<void>()
      const model: ModelProvider = {
        route: "test",
        stream: () =>
          Stream.concat(
            Stream.make(text("Hi")),
            Stream.fromEffect(Effect.as(Deferred.await(more), text("!")))
          )
      }
      yield* writer.hold
      yield* writer.emit({ type: "start-step" })
      const watch = yield* events.watch
      const running = yield* Effect.forkChild(
        ModelStep.run(model, requestFor("hi"), writer, false, yield* IdGenerator, "run_test:0")
      )
      // The step is still streaming: what arrives was written on release, not by a flush.
      const seen = yield* events.follow(row.id, 0, Effect.succeed(false), watch).pipe(Stream.take(3), Stream.runCollect)
      assert.isUndefined(running.pollUnsafe())
      const t = idOf(seen.map((s) => s.chunk), "text-start")
      assert.deepStrictEqual(seen.map((s) => s.chunk), [
        { type: "start-step" },
        { type: "text-start", id: t },
        { type: "text-delta", id: t, delta: "Hi" }
      ])
      yield* Deferred.succeed(more, undefined)
      assert.strictEqual((yield* Fiber.join(running)).text, "Hi!")
    }))

  it.effect("a model that streams nothing still releases the held writer when the step ends", () =>
    Effect.gen(function*() {
      const events = yield* EventLog
      const row = yield* RunStage.stageRun()
      const writer = yield* events.writer(row.id, { fresh: true })
      yield* writer.hold
      yield* writer.emit({ type: "start-step" })
      const watch = yield* events.watch
      const result = yield* ModelStep.run(
        providerOf([]),
        requestFor("hi"),
        writer,
        false,
        yield* IdGenerator,
        "run_test:0"
      )
      assert.deepStrictEqual(result, { text: "", calls: [], tokens: { inputTokens: 0, outputTokens: 0 } })
      const seen = yield* events.follow(row.id, 0, Effect.succeed(false), watch).pipe(Stream.take(1), Stream.runCollect)
      assert.deepStrictEqual(seen.map((s) => s.chunk), [{ type: "start-step" }])
    }))

  it.effect("ModelUnavailable propagates; what streamed before it is stored, and the text part is closed", () =>
    Effect.gen(function*() {
      const events = yield* EventLog
      const row = yield* RunStage.stageRun()
      const writer = yield* events.writer(row.id, { fresh: true })
      const error = yield* Effect.flip(
        ModelStep.run(
          providerOf([text("Half")], "HTTP 503 after 5 attempts"),
          requestFor("hi"),
          writer,
          false,
          yield* IdGenerator,
          "run_test:0"
        )
      )
      assert.deepStrictEqual(error, new ModelUnavailable({ message: "HTTP 503 after 5 attempts" }))
      yield* writer.flush
      const chunks = yield* storedChunks(row.id)
      const t = idOf(chunks, "text-start")
      assert.deepStrictEqual(chunks, [
        { type: "text-start", id: t },
        { type: "text-delta", id: t, delta: "Half" },
        { type: "text-end", id: t }
      ])
    }))

  it.effect("the scripted model's /fail is a ModelUnavailable with nothing written", () =>
    Effect.gen(function*() {
      const events = yield* EventLog
      const row = yield* RunStage.stageRun()
      const writer = yield* events.writer(row.id, { fresh: true })
      const error = yield* Effect.flip(
        ModelStep.run(ScriptedModel, requestFor("/fail"), writer, true, yield* IdGenerator, "run_test:0")
      )
      assert.strictEqual(error._tag, "ModelUnavailable")
      assert.strictEqual(error.message, "the scripted model was told to fail (/fail)")
      yield* writer.flush
      assert.deepStrictEqual(yield* storedChunks(row.id), [])
    }))

  it("addUsage adds the step's tokens, one step, and its cost at the price (cents per 1,000 tokens)", () => {
    const total = { inputTokens: 100, outputTokens: 50, totalTokens: 150, costCents: 0.5, steps: 2 }
    assert.deepStrictEqual(
      ModelStep.addUsage(total, { inputTokens: 4_000, outputTokens: 2_000 }, {
        inputCentsPer1k: 0.25,
        outputCentsPer1k: 1.5
      }),
      {
        inputTokens: 4_100,
        outputTokens: 2_050,
        totalTokens: 6_150,
        costCents: 4.5,
        steps: 3
      }
    )
  })

  it("addUsage prices the step's cached input at the cached-input rate", () => {
    const price = { inputCentsPer1k: 0.2, outputCentsPer1k: 0.8, cachedInputCentsPer1k: 0.05 }
    assert.deepStrictEqual(
      ModelStep.addUsage(ZeroUsage, { inputTokens: 10_000, outputTokens: 1_000, cachedInputTokens: 8_000 }, price),
      { inputTokens: 10_000, outputTokens: 1_000, totalTokens: 11_000, costCents: 0.4 + 0.4 + 0.8, steps: 1 }
    )
  })

  it("addUsage from zero on a free route counts tokens and the step, no cost", () => {
    assert.deepStrictEqual(
      ModelStep.addUsage(ZeroUsage, { inputTokens: 7, outputTokens: 0 }, { inputCentsPer1k: 0, outputCentsPer1k: 0 }),
      {
        inputTokens: 7,
        outputTokens: 0,
        totalTokens: 7,
        costCents: 0,
        steps: 1
      }
    )
  })
})

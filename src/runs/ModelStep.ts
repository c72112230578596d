/**
 * One model step: the provider's stream becomes chunks (text and, when asked
 * for, reasoning) on the run's log as it arrives; tool calls and token counts
 * are collected for the loop, each under a `tc_` id of the service's own
 * (the provider's id is kept beside it, for the provider).
 */
import { Effect, Stream } from "effect"
import type { ToolCall } from "../../domain/Conversation.ts"
import type { UsageTotal } from "../../domain/Run.ts"
import type { IdGenerator } from "../IdGenerator.ts"
import type { ModelEvent, ModelProvider, ModelRequest } from "../model/ModelProvider.ts"
import { costCents, type Price } from "../model/Models.ts"
import type { Writer } from "./EventLog.ts"

export interface StepResult {
  readonly text: string
  readonly calls: ReadonlyArray<ToolCall>
  /** `cachedInputTokens`: of the input, those read from the provider's prompt cache (absent when none). */
  readonly tokens: { readonly inputTokens: number; readonly outputTokens: number; readonly cachedInputTokens?: number }
}

export const run = Effect.fn("ModelStep.run")(function*(
  model: ModelProvider,
  request: ModelRequest,
  writer: Writer,
  streamReasoning: boolean,
  ids: IdGenerator["Service"],
  /** What the step's tool call ids derive from (run and step): a step replayed after a crash calls with the same ids. */
  callIdSeed: string
) {
  let text = ""
  // The answer's part id, minted up front; the part is opened by its first delta.
  const textId = yield* ids.make("textPart")
  let textOpen = false
  /** The open reasoning part: reasoning ends where the answer begins, and more reasoning after that is a new part. */
  let reasoningId: string | undefined
  const calls: Array<ToolCall> = []
  let tokens: StepResult["tokens"] = { inputTokens: 0, outputTokens: 0 }
  let answered = false
  const closeParts = Effect.suspend(() => Effect.andThen(writer.release, Effect.andThen(closeReasoning(), closeText())))
  yield* model.stream(request).pipe(
    Stream.runForEach((event): Effect.Effect<void> => {
      const handled = handle(event)
      if (answered) return handled
      // The model answered: whatever the writer held back goes out with this.
      answered = true
      return Effect.andThen(writer.release, handled)
    }),
    // A stream cut short still closes the parts it opened: clients see whole parts, then the error.
    Effect.onError(() => closeParts)
  )
  yield* closeParts
  return { text, calls, tokens } satisfies StepResult

  function closeText(): Effect.Effect<void> {
    if (!textOpen) return Effect.void
    textOpen = false
    return Effect.asVoid(writer.emit({ type: "text-end", id: textId }))
  }

  function closeReasoning(): Effect.Effect<void> {
    if (reasoningId === undefined) return Effect.void
    const id = reasoningId
    reasoningId = undefined
    return Effect.asVoid(writer.emit({ type: "reasoning-end", id }))
  }

  function handle(event: ModelEvent): Effect.Effect<void> {
    switch (event._tag) {
      case "ReasoningDelta": {
        if (!streamReasoning) return Effect.void
        const delta = event.text
        if (reasoningId !== undefined) {
          return Effect.asVoid(writer.emit({ type: "reasoning-delta", id: reasoningId, delta }))
        }
        return Effect.flatMap(ids.make("reasoningPart"), (id) => {
          reasoningId = id
          return Effect.andThen(
            writer.emit({ type: "reasoning-start", id }),
            writer.emit({ type: "reasoning-delta", id, delta })
          )
        })
      }
      case "TextDelta": {
        const opening = !textOpen
        textOpen = true
        const id = textId
        text += event.text
        return opening
          ? Effect.andThen(
            closeReasoning(),
            Effect.andThen(
              writer.emit({ type: "text-start", id }),
              writer.emit({ type: "text-delta", id, delta: event.text })
            )
          )
          : writer.emit({ type: "text-delta", id, delta: event.text })
      }
      case "ToolCall":
        // The service's own id for the call; the provider's stays with it for the provider.
        return Effect.sync(() => {
          calls.push({
            id: ids.derive("toolCall", `${callIdSeed}:${calls.length}`),
            providerId: event.id,
            name: event.name,
            input: event.input
          })
        })
      case "Finish":
        tokens = {
          inputTokens: event.inputTokens,
          outputTokens: event.outputTokens,
          ...(event.cachedInputTokens === undefined ? {} : { cachedInputTokens: event.cachedInputTokens })
        }
        return Effect.void
    }
  }
})

/** The tokens of a tool's own model call (view_media's analysis): priced as the run's, not a step. */
export const addToolUsage = (
  total: UsageTotal,
  tokens: { readonly inputTokens: number; readonly outputTokens: number; readonly cachedInputTokens?: number },
  price: Price
): UsageTotal => ({
  ...addUsage(total, tokens, price),
  steps: total.steps
})

/** The run's totals after one more step at `price`. */
export const addUsage = (total: UsageTotal, step: StepResult["tokens"], price: Price): UsageTotal => ({
  inputTokens: total.inputTokens + step.inputTokens,
  outputTokens: total.outputTokens + step.outputTokens,
  totalTokens: total.totalTokens + step.inputTokens + step.outputTokens,
  costCents: total.costCents + costCents(price, step.inputTokens, step.outputTokens, step.cachedInputTokens),
  steps: total.steps + 1,
  // Media generations charged so far stay listed (src/media/MediaMeter.ts).
  ...(total.mediaGenerations === undefined ? {} : { mediaGenerations: total.mediaGenerations })
})

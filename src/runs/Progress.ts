/**
 * Progress snapshots (spec 4.3 rule 2, 6.2): with `streamProgress`, one
 * `data-svc-progress` part under a stable id (`progress_<runId>`), replaced in
 * place; nothing without it. Two kinds:
 *
 * - `activity` (summaryAvailable false): what the run does now, in a few
 *   words: thinking, the tools it calls, the approval hook it waits on.
 * - `summary` (summaryAvailable true): a summary of the run's public work
 *   while it waits: the step's tool calls (done, and those still running, for
 *   how long), or the delegated tasks it waits on.
 *
 * A wait that lasts says so: past `WaitingEvery` without a word, and every
 * `WaitingEvery` after that, on the run's Clock. Snapshots never carry the
 * model's reasoning, and nothing here changes how the model reasons. The
 * stream clears a snapshot without a chunk of its own (the first answer
 * text, a step replayed, a pause, the run's end): a pause emits none, its
 * `data-svc-input-requested` says what the run waits on.
 */
import { Clock, Duration, Effect, Fiber, Schedule, Schema } from "effect"
import type { Chunk } from "../../domain/Chunk.ts"
import type { ToolCall } from "../../domain/Conversation.ts"
import { DelegateTaskInput } from "../../domain/Worker.ts"
import type { Writer } from "./EventLog.ts"

/** How long a wait goes without a snapshot before one says what it waits on, and between the next ones. */
export const WaitingEvery = Duration.seconds(5)

export type ProgressKind = "activity" | "summary"

/** The chunk of one snapshot. */
export const snapshot = (runId: string, kind: ProgressKind, text: string): Chunk => ({
  type: "data-svc-progress",
  id: `progress_${runId}`,
  data: { kind, summaryAvailable: kind === "summary", text }
})

const seconds = (ms: number): string => `${Math.round(ms / 1000)} s`

/** The summary of a step's calls while some still run: how many are done, which still run and for how long. */
export const callsText = (calls: ReadonlyArray<ToolCall>, done: ReadonlySet<string>, elapsedMs: number): string => {
  const running = calls.filter((c) => !done.has(c.id)).map((c) => c.name)
  const finished = calls.filter((c) => done.has(c.id)).map((c) => c.name)
  return `Tool calls: ${finished.length} of ${calls.length} done${
    finished.length === 0 ? "" : ` (${finished.join(", ")})`
  }; waiting on ${running.join(", ")} (${seconds(elapsedMs)})`
}

/** The gate waiting on the agent's approval hook for a call. */
export const reviewText = (call: ToolCall, elapsedMs: number): string =>
  `Waiting for the approval hook to review ${call.name} (${seconds(elapsedMs)})`

const decodeTask = Schema.decodeUnknownOption(DelegateTaskInput)

/** The summary of a step waiting on its workers: the tasks' labels, from the delegating calls. */
export const tasksText = (calls: ReadonlyArray<ToolCall>, toolCallIds: ReadonlyArray<string>): string => {
  const labels = toolCallIds.map((id) => {
    const call = calls.find((c) => c.id === id)
    const task = call === undefined ? undefined : decodeTask(call.input)
    return task !== undefined && task._tag === "Some" ? task.value.label : id
  })
  return `Waiting on ${labels.length} delegated ${labels.length === 1 ? "task" : "tasks"}: ${labels.join("; ")}`
}

export interface Progress {
  readonly activity: (text: string) => Effect.Effect<void>
  readonly summary: (text: string) => Effect.Effect<void>
  /**
   * Runs `work`; while it lasts, past `WaitingEvery` and every `WaitingEvery` after, `say` (given
   * the time waited so far) tells what it waits on. Stopped before `work`'s result is returned.
   */
  readonly whileWaiting: <A, E, R>(
    work: Effect.Effect<A, E, R>,
    say: (elapsedMs: number) => Effect.Effect<void>
  ) => Effect.Effect<A, E, R>
  /**
   * Runs the calls concurrently (`run` each); while some still run past `WaitingEvery`, a summary
   * of the calls says which are done and which it waits on.
   */
  readonly calls: <T extends { readonly call: ToolCall }, E, R>(
    items: ReadonlyArray<T>,
    run: (item: T) => Effect.Effect<void, E, R>
  ) => Effect.Effect<void, E, R>
}

/** The run's snapshots; without `streamProgress` (`on` false) nothing is said and the work runs as it is. */
export const make = (runId: string, on: boolean, writer: Writer): Progress => {
  const say = (kind: ProgressKind) => (text: string) =>
    on ? Effect.asVoid(writer.emit(snapshot(runId, kind, text))) : Effect.void
  const whileWaiting = <A, E, R>(work: Effect.Effect<A, E, R>, tell: (elapsedMs: number) => Effect.Effect<void>) =>
    on
      ? Effect.gen(function*() {
        const since = yield* Clock.currentTimeMillis
        const ticks = Effect.repeat(
          Effect.flatMap(Clock.currentTimeMillis, (now) => tell(now - since)),
          Schedule.spaced(WaitingEvery)
        ).pipe(Effect.delay(WaitingEvery))
        const ticker = yield* Effect.forkChild(ticks)
        return yield* work.pipe(Effect.ensuring(Fiber.interrupt(ticker)))
      })
      : work
  const summary = say("summary")
  return {
    activity: say("activity"),
    summary,
    whileWaiting,
    calls: (items, run) => {
      const done = new Set<string>()
      return whileWaiting(
        Effect.forEach(items, (item) => Effect.ensuring(run(item), Effect.sync(() => done.add(item.call.id))), {
          concurrency: "unbounded",
          discard: true
        }),
        (elapsedMs) => summary(callsText(items.map((i) => i.call), done, elapsedMs))
      )
    }
  }
}

/**
 * A run's remote workspace (issue 31): the workspace tools of
 * src/workspace/WorkspaceTools.ts (the same definitions: names, descriptions,
 * input schemas, decoded here first) whose calls go to the environment's
 * runners instead of a sandbox. A call is a row of `environment_calls`
 * (EnvironmentRepo): whatever node the run is on and whatever node a runner
 * polls, the runner claims it there and answers it there, and the run hears
 * of it by NOTIFY. Guarantees:
 *
 * - No runner connected: the call waits `availabilityWaitMs` (saying so in
 *   the run's progress), then fails with `workspace_unavailable`; a call no
 *   runner took is withdrawn, so it never runs later.
 * - A run replayed on another node (its node died) finds its calls' rows
 *   (their ids follow from the tool calls'): none is sent twice.
 * - A runner lost mid-call (its connection closed, or no heartbeat for
 *   `runnerStaleSeconds`, its node gone): a read (`read_file`, `glob`,
 *   `grep`) is queued again for another runner (at most 3 attempts); a write
 *   or a command (`write_file`, `edit_file`, `bash`) is never sent twice: it
 *   answers `outcome_unknown`, telling the model to check before redoing it.
 * - Each call goes to runners of its own environment only (the token names
 *   it); no secret of the service travels with a call (remote workspaces take
 *   no secret contexts).
 */
import { Clock, Context, Duration, Effect, Layer, Option, Result, Schema } from "effect"
import type { RemoteWorkspace } from "../../domain/Agent.ts"
import { IdGenerator } from "../IdGenerator.ts"
import * as ToolDef from "../tools/ToolDef.ts"
import type { CallRef, ToolFamily } from "../tools/ToolFamily.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import * as WorkspaceTools from "../workspace/WorkspaceTools.ts"
import { type CallState, EnvironmentRepo } from "./EnvironmentRepo.ts"
import { EnvironmentSignals } from "./EnvironmentSignals.ts"

/** How long a call waits for a runner of its environment to take it. */
export const availabilityWaitMs = 60_000
/** How long a taken call may go unanswered before its runner's liveness is checked again. */
const livenessCheckMs = 15_000
/** The longest a taken call is waited for (a command's longest wall time, 10 min, and margin). */
const maxCallMs = 15 * 60_000

/** Reads: safe to run again on another runner when the first was lost. */
const retryable = new Set(["read_file", "glob", "grep"])

/** `{ lost: true }`, or the runner's outcome as the JSON text it sent (key order kept). */
const Answer = Schema.Union([
  Schema.Struct({ lost: Schema.Literal(true) }),
  Schema.fromJsonString(Schema.Struct({ output: Schema.Unknown, text: Schema.String, isError: Schema.Boolean }))
])
const decodeAnswer = Schema.decodeUnknownOption(Answer)

/**
 * What is left until `deadline` (ms on the Clock), none once past. Waits are measured to deadlines
 * fixed when the call was sent, so a clock that moved on before the wait began (TestClock) is counted.
 */
const untilDeadline = (deadline: number) =>
  Effect.map(Clock.currentTimeMillis, (now) => Duration.millis(Math.max(0, deadline - now)))

export interface RemoteOptions {
  readonly workspace: RemoteWorkspace
  /** Says what the run waits on (Progress.activity). */
  readonly progress: (text: string) => Effect.Effect<void>
}

interface RemoteCall {
  readonly send: (tool: string, input: unknown) => Effect.Effect<ToolOutcome.ToolOutcome>
}

/** A workspace tool whose call is sent with `send` once its input decoded with the tool's own schema. */
const remoteOf = (tool: ToolDef.ToolDef<never, unknown>): ToolDef.ToolDef<RemoteCall> => ({
  name: tool.name,
  untrusted: tool.untrusted,
  spec: tool.spec,
  prepare: (input) => Result.map(tool.prepare(input), () => (ctx: RemoteCall) => ctx.send(tool.name, input))
})

const unavailable = (environmentId: string) =>
  ToolOutcome.failure(
    "workspace_unavailable",
    `No runner of environment ${environmentId} took the call within ${
      availabilityWaitMs / 1000
    } s: start one (agent-service environment run) and try again.`
  )

const outcomeUnknown = (tool: string) =>
  ToolOutcome.failure(
    "outcome_unknown",
    `The runner executing ${tool} was lost before it answered: the call may or may not have taken effect. ` +
      "Check the workspace before doing it again."
  )

export class RemoteWorkspaces extends Context.Service<RemoteWorkspaces, {
  readonly family: (options: RemoteOptions) => ToolFamily
}>()("svc/RemoteWorkspaces") {
  static readonly layer = Layer.effect(RemoteWorkspaces)(
    Effect.gen(function*() {
      const repo = yield* EnvironmentRepo
      const signals = yield* EnvironmentSignals
      const ids = yield* IdGenerator

      /**
       * The call's state once answered (or lost), checking its runners' liveness at `checkAt`, then every
       * livenessCheckMs after it. Due times stay on that schedule: one that passed while the last check ran
       * (a stalled node, a TestClock moved on) is made at once, at the time it is then.
       */
      const settle = (
        environmentId: string,
        id: string,
        startedAt: number,
        checkAt: number
      ): Effect.Effect<CallState | { readonly state: "withdrawn" }> =>
        Effect.gen(function*() {
          const state = yield* signals.waitFor(
            [`done:${id}`],
            Effect.map(
              repo.callState(id),
              (s) => (s.state === "done" || s.state === "gone" ? Option.some(s) : Option.none())
            ),
            yield* untilDeadline(checkAt)
          )
          if (Option.isSome(state)) return state.value
          yield* repo.dropStale(environmentId)
          const now = yield* Clock.currentTimeMillis
          if (now - startedAt > maxCallMs) return { state: "gone" } as const
          // Queued again (its runner was lost) while no runner is left: not waited for a second time.
          const current = yield* repo.callState(id)
          if (current.state === "pending" && (yield* repo.runners(environmentId)).length === 0) {
            if (yield* repo.withdraw(id)) return { state: "withdrawn" } as const
          }
          return yield* settle(environmentId, id, startedAt, checkAt + livenessCheckMs)
        })

      // The call's id follows from the tool call's (itself the same when a step is replayed after a crash):
      // a replayed call finds its row (taken, answered or lost) instead of being sent a second time.
      const send = (options: RemoteOptions, call: CallRef) => (tool: string, input: unknown) =>
        Effect.suspend(() => {
          const id = ids.derive("environmentCall", call.id)
          const environmentId = options.workspace.environmentId
          return Effect.gen(function*() {
            // Read before the call is queued: every wait below counts from the moment it could be taken.
            const start = yield* Clock.currentTimeMillis
            yield* repo.insertCall({ id, environmentId, tool, input, retryable: retryable.has(tool) })
            const tellWaiting = Effect.sleep(Duration.seconds(5)).pipe(
              Effect.andThen(Clock.currentTimeMillis),
              Effect.flatMap((now) =>
                options.progress(
                  `Waiting for a runner of environment ${environmentId} (${Math.round((now - start) / 1000)} s)`
                )
              ),
              Effect.forever
            )
            // Taken (or answered) by a runner within the availability window, else withdrawn.
            const taken = yield* Effect.raceFirst(
              signals.waitFor(
                [`done:${id}`, `taken:${id}`],
                Effect.map(repo.callState(id), (s) => (s.state === "pending" ? Option.none() : Option.some(s))),
                yield* untilDeadline(start + availabilityWaitMs)
              ),
              tellWaiting
            )
            if (Option.isNone(taken) && (yield* repo.withdraw(id))) return unavailable(environmentId)
            const settled = yield* settle(environmentId, id, start, start + livenessCheckMs)
            const answer = settled.state === "done" ? decodeAnswer(settled.result) : Option.none()
            if (settled.state === "withdrawn") return unavailable(environmentId)
            if (Option.isNone(answer) || "lost" in answer.value) return outcomeUnknown(tool)
            const { isError, output, text } = answer.value
            return { output, text, isError }
          }).pipe(
            // The run stopped waiting (cancelled, its node stopping): a call no runner took never runs.
            Effect.onInterrupt(() => Effect.asVoid(repo.withdraw(id)))
          )
        })

      return {
        family: (options) => {
          const tools = [
            ...WorkspaceTools.fileTools,
            ...(options.workspace.shell === true ? [WorkspaceTools.bash] : [])
          ]
          return ToolDef.family(tools.map(remoteOf), { context: (call) => ({ send: send(options, call) }) })
        }
      }
    })
  )
}

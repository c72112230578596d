/**
 * One execution of a run (a root run, or a worker run of a subagent tree),
 * from its last checkpoint to a terminal state or a park: it reads the run,
 * opens its stream writer and heartbeat, resumes a parked step, opens the
 * run's tools, gate and system prompt, hands them to the step loop, bounds it
 * by maxDurationMs (a worker by its root's deadline), maps failures, and
 * records the outcome. An interruption finalizes the run as cancelled only when
 * `cancelRequested` says so; any other interruption (the runner stopping, the
 * shard moving) leaves it to be resumed from its last checkpoint.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import { type Message, userMessage } from "../../domain/Conversation.ts"
import type { RunId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import { ActiveStatuses, isTerminal, type UsageTotal, ZeroUsage } from "../../domain/Run.ts"
import type { RunPlan } from "../../domain/RunPlan.ts"
import { Artifacts } from "../artifacts/Artifacts.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import * as MediaMeter from "../media/MediaMeter.ts"
import { Bands } from "../model/Bands.ts"
import type { ModelUnavailable } from "../model/ModelProvider.ts"
import { Models } from "../model/Models.ts"
import { NodeRepo } from "../store/NodeRepo.ts"
import { type FreshRun, RunRepo, type RunRow } from "../store/RunRepo.ts"
import { nowIso } from "../Time.ts"
import type { ToolOutcome } from "../tools/ToolOutcome.ts"
import type { SnapshotUnavailable } from "../workspace/SnapshotUnavailable.ts"
import type { WorkspaceUnavailable } from "../workspace/WorkspaceUnavailable.ts"
import * as AttachmentFiles from "./AttachmentFiles.ts"
import { Delegation } from "./Delegation.ts"
import { EventLog, fenced, runChange, type Writer } from "./EventLog.ts"
import { Finalize } from "./Finalize.ts"
import * as ModelStep from "./ModelStep.ts"
import { completed, failed, Outcome } from "./Outcome.ts"
import { Parking } from "./Parking.ts"
import { RunTools } from "./RunTools.ts"
import * as StepGuards from "./StepGuards.ts"
import { runTool, StepLoop } from "./StepLoop.ts"
import { systemPrompt } from "./SystemPrompt.ts"
import { ToolGate } from "./ToolGate.ts"

/** An execution's end: what the actors do next depends on it (a worker that ended wakes its root). */
export interface Executed {
  readonly row: RunRow
  readonly outcome: Outcome
}

export class AgentLoop extends Context.Service<AgentLoop, {
  /**
   * Runs (or resumes) the run to a terminal state or a park; how it ended, with the run as it
   * began (none when there was nothing to run). `created`: the Start that follows the run's creation.
   */
  readonly execute: (
    runId: RunId,
    cancelRequested: Effect.Effect<boolean>,
    created: boolean
  ) => Effect.Effect<Executed | undefined>
}>()("svc/AgentLoop") {
  static readonly layer = Layer.effect(AgentLoop)(
    Effect.gen(function*() {
      const repo = yield* RunRepo
      const events = yield* EventLog
      const models = yield* Models
      const config = yield* ServiceConfig
      const parking = yield* Parking
      const artifacts = yield* Artifacts
      const finalize = yield* Finalize
      const runTools = yield* RunTools
      const toolGate = yield* ToolGate
      const stepLoop = yield* StepLoop
      const nodes = yield* NodeRepo
      const ids = yield* IdGenerator
      const bands = yield* Bands
      const delegation = yield* Delegation

      /** A step that was streaming when the previous executor died is replayed from scratch. */
      const announceReplay = Effect.fn("AgentLoop.announceReplay")(function*(row: RunRow, writer: Writer) {
        if (writer.startSeq === 0) {
          yield* writer.emit({ type: "start", messageId: row.id })
          // A worker's sub-stream opens with what its task is (spec 6.2).
          const worker = row.plan?.worker
          if (worker !== undefined) {
            const { role, label } = worker
            yield* writer.emit({
              type: "data-svc-worker-meta",
              data: { role, label, status: "running", prompt: row.plan?.input ?? "" }
            })
          }
          return
        }
        if (row.park !== null) return
        const logged = yield* events.read(row.id, 0)
        const opened = logged.filter((e) => e.chunk.type === "start-step").length
        const closed = logged.filter((e) => e.chunk.type === "finish-step").length
        if (opened > closed) yield* writer.emit({ type: "reset-step" })
      })

      /**
       * Everything up to the step loop; `usage` is what finalization records, `unstored` the snapshot
       * of the run's workspace that could not be stored when the scope closed.
       */
      const body = (
        row: RunRow,
        plan: RunPlan,
        writer: Writer,
        usage: { current: UsageTotal },
        fresh: Option.Option<FreshRun>,
        unstored: { current: SnapshotUnavailable | undefined }
      ) =>
        Effect.gen(function*() {
          const runId = row.id
          const worker = plan.worker
          yield* announceReplay(row, writer)
          const startedAt = row.run.startedAt ?? (yield* nowIso)
          // A parked step resumes only once every interaction and worker it waits on is settled.
          const parked = yield* parking.parkedCalls(row)
          if (
            parked.some((w) => w.interaction === undefined || w.interaction.status === "pending") ||
            (yield* delegation.waiting(row))
          ) {
            return Outcome.StillParked()
          }
          // Stored with the first chunks of the run.
          yield* writer.attach([runChange({ status: "running", startedAt, executor: nodes.id })])

          const model = models.provider(plan.route)
          const price = models.price(plan.route)
          if (model === undefined) {
            return failed("upstream_unavailable", `Model route '${plan.route}' is not available.`)
          }
          // Checked at start, and again here: a run resumed after a restart whose band lost its
          // verified strict route is never inferred on an unverified one.
          if (row.run.config.dataHandling === "strict" && !bands.isStrictAvailable(row.run.config.band)) {
            return failed(
              "strict_data_handling_unavailable",
              `The run requires strict data handling, but band '${row.run.config.band}' no longer has a verified zero-retention route.`,
              "data_handling_unavailable"
            )
          }
          const limits = StepGuards.costLimits(plan, config.maxRunCents)
          if (price === undefined && limits.length > 0) {
            return failed(
              "pricing_unavailable",
              `Route '${plan.route}' has no price (neither SVC_ROUTE_PRICES nor the price catalog lists it), so ${
                limits.join(", ")
              } cannot be enforced; the run failed before inference and nothing was billed.`,
              "pricing_unavailable"
            )
          }
          const unpricedMedia = MediaMeter.unpricedRefusal(plan.media, limits)
          if (unpricedMedia !== undefined) return failed("pricing_unavailable", unpricedMedia, "pricing_unavailable")
          const principal: Principal = { keyId: "", organizationId: row.organizationId, workspaceId: row.workspaceId }
          // A new run has no steps yet, and no history when its thread had no runs before it.
          const checkpoints = Option.isSome(fresh) ? [] : yield* repo.checkpoints(runId)
          const tools = yield* runTools.open(
            {
              runId,
              threadId: row.run.threadId,
              agentId: row.run.agentId,
              mediaFidelity: row.run.config.mediaFidelity
            },
            principal,
            plan,
            writer,
            {
              resumed: row.park !== null,
              firstExecution: checkpoints.length === 0 && row.park === null,
              snapshotUnavailable: (error) => Effect.sync(() => void (unstored.current = error)),
              usage
            }
          )
          const system = systemPrompt(plan, yield* Clock.currentTimeMillis, row.run.config.timeZone, {
            untrusted: tools.untrusted,
            deferred: tools.hasDeferred,
            instructions: tools.instructions
          })
          const gate = yield* toolGate.forRun({
            runId,
            tree: { rootRunId: worker?.rootRunId ?? runId, workerRef: worker?.workerRef ?? null },
            threadId: row.run.threadId,
            agentId: row.run.agentId,
            principal,
            plan,
            tools,
            reportHookFailure: (message) => writer.emit({ type: "error", errorText: message })
          })

          const runMessages: Array<Message> = checkpoints.flatMap((c) => c.messages)
          // The tree's deadline: the root's maxDurationMs from its start; a worker keeps its root's.
          const deadlineMs = worker !== undefined
            ? worker.deadlineMs
            : plan.maxDurationMs === null
            ? null
            : Date.parse(startedAt) + plan.maxDurationMs
          if (row.park !== null) {
            const earlierCalls = runMessages.flatMap((m) => (m.role === "assistant" ? m.toolCalls : []))
            const call = runTool(tools, writer)
            const step = row.park.step
            const beforeResume = usage.current
            // Tokens of the resumed calls' own model calls (view_media's analysis), added to the park's usage below.
            const toolTokens: Array<NonNullable<ToolOutcome["usage"]>> = []
            const resumed = yield* parking.resume(row, writer, parked, {
              run: (c, stepCalls) =>
                Effect.tap(
                  call(c, { runCalls: [...earlierCalls, ...stepCalls], resumed: true, step }),
                  (outcome) => Effect.sync(() => outcome.usage === undefined || toolTokens.push(outcome.usage))
                ),
              isDelegation: tools.isDelegation,
              delegate: (calls) => delegation.spawn(row, calls, writer, deadlineMs)
            })
            if (resumed._tag === "Delegated") return Outcome.Delegated()
            // Media generated by the calls the resume ran were charged meanwhile: kept on the park's usage.
            usage.current = MediaMeter.carried(resumed.usage, beforeResume, usage.current)
            for (const tokens of toolTokens) {
              usage.current = ModelStep.addToolUsage(
                usage.current,
                tokens,
                price ?? { inputCentsPer1k: 0, outputCentsPer1k: 0 }
              )
            }
            runMessages.push(...resumed.messages)
          }
          // A worker's conversation is its task alone (the thread's history is its root's).
          const history = worker !== undefined || (Option.isSome(fresh) && !fresh.value.hasHistory)
            ? []
            : yield* repo.history(row.run.threadId, row.run.createdAt)
          const messages: Array<Message> = [...history, userMessage(plan.input, plan.attachments), ...runMessages]
          // Schemas loaded in earlier steps stay loaded.
          tools.restore(messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls : [])))
          return yield* stepLoop.run({
            row,
            plan,
            writer,
            model,
            price: price ?? { inputCentsPer1k: 0, outputCentsPer1k: 0 },
            system,
            tools,
            gate,
            messages,
            files: AttachmentFiles.loader(artifacts),
            runCalls: runMessages.flatMap((m) => (m.role === "assistant" ? [...m.toolCalls] : [])),
            step: checkpoints.length + (row.park === null ? 0 : 1),
            claimFirst: Option.isNone(fresh),
            followups: worker === undefined,
            usage,
            othersCost: yield* delegation.othersCost(row, limits.length > 0),
            deadlineMs
          })
        })

      /** maxDurationMs counts from the run's start (a worker's, from its root's); failures become the run's outcome. */
      const bounded = (
        row: RunRow,
        plan: RunPlan,
        outcome: Effect.Effect<Outcome, ModelUnavailable | WorkspaceUnavailable | SnapshotUnavailable>
      ) => {
        const worker = plan.worker
        const deadline = worker !== undefined
          ? worker.deadlineMs
          : plan.maxDurationMs === null
          ? null
          : Date.parse(row.run.startedAt ?? row.run.createdAt) + plan.maxDurationMs
        const timed = deadline === null ? outcome : Effect.flatMap(Clock.currentTimeMillis, (now) =>
          outcome.pipe(
            Effect.timeoutOrElse({
              duration: Duration.millis(Math.max(0, deadline - now)),
              orElse: () => Effect.succeed(completed("max_duration_exceeded"))
            })
          ))
        return timed.pipe(
          Effect.catchTag(
            "WorkspaceUnavailable",
            (e) =>
              Effect.succeed(
                failed(
                  "workspace_unavailable",
                  `The managed workspace could not start: ${e.message}`,
                  "workspace_unavailable"
                )
              )
          ),
          Effect.catchTag(
            "SnapshotUnavailable",
            (e) =>
              Effect.succeed(
                failed(
                  "snapshot_unavailable",
                  `The managed workspace's snapshot is unavailable: ${e.message}`,
                  "snapshot_unavailable"
                )
              )
          ),
          Effect.catchTag("ModelUnavailable", (e) =>
            Effect.as(
              // The run's error tells its caller; the log tells the operator (a provider down, a key refused).
              Effect.logWarning(`model call failed: ${e.message}`),
              e.contextOverflow === true
                ? failed(
                  "context_overflow",
                  `The conversation outgrew the model's context window: ${e.message}`,
                  "context_overflow"
                )
                : failed("upstream_unavailable", `The model provider is unavailable: ${e.message}`)
            )),
          Effect.catchDefect((defect) =>
            Effect.flatMap(ids.make("incident"), (reference) =>
              Effect.as(
                Effect.logError("run engine fault", defect).pipe(Effect.annotateLogs({ reference, run_id: row.id })),
                failed("internal_error", "The run failed because of an internal error.", "engine_fault", reference)
              ))
          )
        )
      }

      const execute = Effect.fn("AgentLoop.execute")(
        function*(runId: RunId, cancelRequested: Effect.Effect<boolean>, created: boolean) {
          yield* Effect.annotateCurrentSpan("svc.run.id", runId)
          // The first execution of a run created here needs no read, unless a cancel came first. Only the Start
          // that follows the creation may use the row kept in memory: a later one (recovery, hand-off) may find
          // the run executed elsewhere meanwhile. Taken either way, so it never lingers.
          const taken = repo.takeFresh(runId)
          const fresh = created && Option.isSome(taken) && !(yield* cancelRequested) ? taken : Option.none<FreshRun>()
          // Any other execution claims the run: whatever executed it before is fenced out from now on.
          const found = Option.isSome(fresh)
            ? Option.some(fresh.value.row)
            : yield* repo.claim(runId, ActiveStatuses, nodes.id)
          if (Option.isNone(found) || isTerminal(found.value.run.status)) return undefined
          const row = found.value
          const plan = row.plan
          if (plan === undefined) {
            yield* Effect.logError("run plan cannot be read; left to the recovery pass").pipe(
              Effect.annotateLogs({ run_id: runId })
            )
            return undefined
          }
          const writer = yield* events.writer(runId, { fresh: Option.isSome(fresh), attempt: row.attempt })
          // Everything before the model's first answer goes in one write.
          if (!plan.streamProgress) yield* writer.hold
          const usage = { current: row.run.usage ?? ZeroUsage }
          // Heartbeat: the recovery pass leaves a run alone while it is executing somewhere.
          const beat = Duration.millis(Math.max(1000, Math.floor(config.runStallMs / 4)))
          // It also finds out, between writes, that a later claim took the run.
          const touch = Effect.flatMap(
            Effect.flatMap(nowIso, (now) => repo.touch(runId, row.attempt, now)),
            (held) => (held ? Effect.void : writer.lose)
          )
          yield* Effect.forkScoped(Effect.repeat(touch, Schedule.spaced(beat)).pipe(Effect.delay(beat)))
          // A cancel finalizes the run, unless this execution lost its claim (then it is not this one's to end);
          // any other interruption (the shard moved, the runner stops) hands the run back to the recovery pass.
          const onInterrupt = Effect.flatMap(
            Effect.all([cancelRequested, writer.isLost]),
            ([cancelled, lost]) =>
              lost
                ? Effect.void
                : cancelled
                ? finalize.cancelled(row, writer, usage.current)
                : Effect.flatMap(nowIso, (now) => repo.release(runId, row.attempt, now)).pipe(
                  Effect.catchCause((cause) =>
                    Effect.logWarning("releasing the interrupted run failed; the recovery pass takes it over", cause)
                  )
                )
          )
          // The run's tools (and its workspace, whose files are snapshotted then) close before the outcome is recorded.
          return yield* fenced(
            writer,
            Effect.gen(function*() {
              // A run that would complete ends snapshot_unavailable when its workspace's files could not be stored.
              const unstored: { current: SnapshotUnavailable | undefined } = { current: undefined }
              const executed = Effect.scoped(body(row, plan, writer, usage, fresh, unstored)).pipe(
                Effect.flatMap((outcome) =>
                  outcome._tag === "Completed" && unstored.current !== undefined
                    ? Effect.fail(unstored.current)
                    : Effect.succeed(outcome)
                )
              )
              const outcome = yield* bounded(row, plan, executed).pipe(Effect.onInterrupt(() => onInterrupt))
              yield* finalize.outcome(row, writer, outcome, usage.current)
              return { row, outcome } satisfies Executed
            })
          )
        },
        Effect.scoped
      )

      // Every log line of an execution names its run.
      return {
        execute: (runId, cancelRequested, created) =>
          Effect.annotateLogs(execute(runId, cancelRequested, created), { run_id: runId })
      }
    })
  )
}

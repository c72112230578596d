/**
 * Runs (spec 4.2 messages / cancel / warm, 4.3): starting a run captures the
 * configuration and plan, claims the thread atomically (409 thread_busy when
 * another run holds it) and hands the run to its RunEntity; reads, lists,
 * cancellation and the durable stream.
 */
import { Cause, Clock, Context, Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import { Sharding } from "effect/cluster"
import { RunEntity } from "../../actors/RunEntity.ts"
import { type PreparedRun, ThreadEntity } from "../../actors/ThreadEntity.ts"
import {
  Conflict,
  type InvalidRequest,
  NotFound,
  type PermissionDenied,
  RateLimited,
  Unavailable
} from "../../domain/Errors.ts"
import type { AgentId, FollowupId, RunId, ThreadId, WorkerId } from "../../domain/Ids.ts"
import type { PageOf, PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { isTerminal, type MessageInput, type Run, type RunReceipt, ZeroUsage } from "../../domain/Run.ts"
import { Agents } from "../agents/Agents.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { requireOwned } from "../Ownership.ts"
import { pageWindow, toPage } from "../store/Cursor.ts"
import { FollowupRepo } from "../store/FollowupRepo.ts"
import { type RunFilter, RunRepo, type RunRow } from "../store/RunRepo.ts"
import { WorkerRepo } from "../store/WorkerRepo.ts"
import { Threads } from "../threads/Threads.ts"
import { treeTotal } from "./Delegation.ts"
import { EventLog, type SequencedChunk, type Watch } from "./EventLog.ts"
import { RunStart, type StartError } from "./RunStart.ts"
import { pastRetention, unavailableStream } from "./StreamRetention.ts"

export type { StartError } from "./RunStart.ts"

export class Runs extends Context.Service<Runs, {
  readonly start: (
    principal: Principal,
    threadId: ThreadId,
    input: MessageInput,
    idempotencyKey: string | undefined
  ) => Effect.Effect<RunReceipt, StartError>
  readonly get: (principal: Principal, id: RunId) => Effect.Effect<Run, NotFound | PermissionDenied>
  readonly list: (
    principal: Principal,
    filter: RunFilter,
    page: PageRequest
  ) => Effect.Effect<PageOf<Run>, InvalidRequest>
  readonly cancel: (principal: Principal, id: RunId) => Effect.Effect<Run, NotFound | PermissionDenied>
  readonly cancelThread: (
    principal: Principal,
    threadId: ThreadId
  ) => Effect.Effect<
    { readonly id: ThreadId; readonly object: "thread.cancel"; readonly cancelledRunId: RunId | null },
    NotFound | PermissionDenied
  >
  readonly stream: (
    principal: Principal,
    id: RunId,
    afterSeq: number
  ) => Effect.Effect<Stream.Stream<SequencedChunk>, NotFound | PermissionDenied>
  /**
   * Starts a run (through `wrap`, e.g. idempotency) and returns its stream,
   * watched from before the run existed: the caller started it, so no lookup,
   * and nothing is read back unless `wrap` answered with an earlier run.
   */
  readonly startStreaming: <E>(
    principal: Principal,
    threadId: ThreadId,
    input: MessageInput,
    idempotencyKey: string | undefined,
    wrap: (start: Effect.Effect<RunReceipt, StartError>) => Effect.Effect<RunReceipt, E>
  ) => Effect.Effect<{ readonly receipt: RunReceipt; readonly stream: Stream.Stream<SequencedChunk> }, E>
  /**
   * A worker's sub-stream (subagents), scoped under its root: its transcript from after
   * `afterSeq`, live while it runs and replayable like a run's stream once it ended; 404
   * worker_not_found when the root has no such worker; 409 run_not_active while the root has
   * ended and the worker not yet (the root's end stops it): neither live under an active run nor
   * final (spec 7).
   */
  readonly workerStream: (
    principal: Principal,
    rootRunId: RunId,
    workerRef: WorkerId,
    afterSeq: number
  ) => Effect.Effect<
    { readonly runId: RunId; readonly stream: Stream.Stream<SequencedChunk> },
    NotFound | PermissionDenied | Conflict
  >
  readonly warm: (principal: Principal, threadId: ThreadId) => Effect.Effect<void, NotFound | PermissionDenied>
  /** Cancels every active run of the agent's threads (before the agent is deleted). */
  readonly cancelAgentRuns: (principal: Principal, agentId: AgentId) => Effect.Effect<void, NotFound | PermissionDenied>
  readonly withdrawFollowup: (
    principal: Principal,
    runId: RunId,
    followupId: FollowupId
  ) => Effect.Effect<
    { readonly id: FollowupId; readonly object: "run.followup"; readonly deleted: true },
    NotFound | PermissionDenied
  >
}>()("svc/Runs") {
  static readonly layer = Layer.effect(Runs)(
    Effect.gen(function*() {
      const repo = yield* RunRepo
      const workers = yield* WorkerRepo
      const followups = yield* FollowupRepo
      const events = yield* EventLog
      const threads = yield* Threads
      const runStart = yield* RunStart
      const agents = yield* Agents
      const config = yield* ServiceConfig
      const sharding = yield* Sharding.Sharding
      const runClient = yield* RunEntity.client.pipe(Effect.provideService(Sharding.Sharding, sharding))
      const threadClient = yield* ThreadEntity.client.pipe(Effect.provideService(Sharding.Sharding, sharding))

      const getRow = (principal: Principal, id: RunId) =>
        repo.findRoot(id).pipe(Effect.flatMap(requireOwned<RunRow>(principal, "run", id)))

      /** The workers of the roots among `rows` that may have delegated, by root. */
      const workersOf = (rows: ReadonlyArray<RunRow>) =>
        Effect.map(workers.ofRoots(rows.filter((r) => r.plan?.subagents === true).map((r) => r.id)), (found) => {
          const byRoot = new Map<string, Array<RunRow>>()
          for (const w of found) {
            const root = w.plan?.worker?.rootRunId
            if (root !== undefined) byRoot.set(root, [...(byRoot.get(root) ?? []), w])
          }
          return byRoot
        })

      /**
       * The Run resource: `queuedFollowups` appears whenever held messages remain; a root that
       * delegated shows its tree's usage (each member as of its last completed step).
       */
      const presentWith = (row: RunRow, members: ReadonlyArray<RunRow>) =>
        Effect.map(followups.queued(row.id), (queued): Run => {
          const run = members.length === 0 || row.run.usage === undefined
            ? row.run
            : { ...row.run, usage: treeTotal(row.run.usage, members) }
          return queued.length === 0 && row.run.status !== "waiting_for_approval" &&
              row.run.status !== "waiting_for_input"
            ? run
            : { ...run, queuedFollowups: queued }
        })
      const present = (row: RunRow) =>
        Effect.flatMap(workersOf([row]), (byRoot) => presentWith(row, byRoot.get(row.id) ?? []))

      /**
       * The turn on the thread's entity. A shard moving while the request is under way (a runner joining or
       * leaving) can abandon it: the caller would be interrupted and answered an empty 503. It answers 503
       * `service_unavailable` instead; a retry with the same Idempotency-Key answers with the run if it started.
       */
      const beginOnEntity = (threadId: ThreadId, prepared: PreparedRun) =>
        Effect.gen(function*() {
          const exit = yield* Fiber.await(
            yield* Effect.forkChild(threadClient(threadId).Begin({ prepared }).pipe(Effect.orDie))
          )
          if (Exit.isSuccess(exit)) return exit.value
          if (!Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.failCause(exit.cause)
          return yield* new Unavailable({
            code: "service_unavailable",
            message:
              "The cluster moved this thread while the message was being handled; retry in a moment (with the same Idempotency-Key, a retry answers with the run if it started)."
          })
        })

      /** Starts the run; `fresh`: this call created it (else it answered for an earlier call of the same request). */
      const begin = Effect.fn("Runs.start")(function*(
        principal: Principal,
        threadId: ThreadId,
        input: MessageInput,
        idempotencyKey: string | undefined
      ) {
        const { row, holdableText } = yield* runStart.prepare(principal, threadId, input, idempotencyKey)
        const began = yield* beginOnEntity(threadId, {
          run: row.run,
          plan: row.plan,
          organizationId: row.organizationId,
          workspaceId: row.workspaceId,
          idempotencyKey: row.idempotencyKey,
          holdableText
        })
        if (began._tag === "Capped") {
          return yield* new RateLimited({
            code: "quota_exceeded",
            message: "This workspace has its maximum of active runs; retry once one of them ends or parks.",
            retryAfterSeconds: 1
          })
        }
        if (began._tag === "Busy") {
          // A plain-text message was held for the active run's next turn boundary (spec 4.2, 4.3 rule 4).
          if (began.resolvedInteractionId !== null) {
            return yield* new Conflict({
              code: "thread_busy",
              message: "The run waits on an interaction; this message answered it. Do not re-send it.",
              details: { active_run_id: began.activeRunId, resolved_interaction_id: began.resolvedInteractionId }
            })
          }
          return yield* new Conflict(
            began.followupId === null
              ? {
                code: "thread_busy",
                message: "Another run is active on this thread; wait for it to finish or cancel it.",
                details: { active_run_id: began.activeRunId }
              }
              : {
                code: "thread_busy",
                message:
                  "Another run is active on this thread; the message was held and will be delivered at its next turn boundary. Do not re-send it.",
                details: { active_run_id: began.activeRunId, queued: true, followup_id: began.followupId }
              }
          )
        }
        // This request again, after its first answer was lost: the run it started.
        const started = began.earlier ?? { runId: row.id, createdAt: row.createdAt }
        const receipt: RunReceipt = {
          runId: started.runId,
          threadId,
          agentId: row.run.agentId,
          organizationId: principal.organizationId,
          status: "queued" as const,
          ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
          createdAt: started.createdAt
        }
        return { receipt, fresh: began.earlier === undefined }
      })
      const start = (
        principal: Principal,
        threadId: ThreadId,
        input: MessageInput,
        idempotencyKey: string | undefined
      ) => Effect.map(begin(principal, threadId, input, idempotencyKey), (r) => r.receipt)

      /**
       * A stream ends at the run's final end, or at a turn's end while the run is parked. Resumed
       * after a frame (Last-Event-ID): a finished run with nothing after that frame ends at once;
       * a parked one waits for what comes next (its resumption or its expiry, in the same log).
       */
      const follow = (id: RunId, afterSeq: number, watch?: Watch) => {
        const following = events.follow(
          id,
          afterSeq,
          Effect.map(repo.find(id), (row) =>
            Option.match(row, {
              onNone: () => true,
              onSome: (r) =>
                isTerminal(r.run.status) || r.run.status === "waiting_for_approval" ||
                r.run.status === "waiting_for_input"
            })),
          watch
        )
        if (afterSeq === 0) return following
        return Stream.unwrap(Effect.gen(function*() {
          const row = yield* repo.find(id)
          const finished = Option.match(row, { onNone: () => true, onSome: (r) => isTerminal(r.run.status) })
          return finished && (yield* events.lastSeq(id)) <= afterSeq ? Stream.empty : following
        }))
      }

      const cancelRun = (row: RunRow) =>
        Effect.gen(function*() {
          if (!isTerminal(row.run.status)) {
            yield* runClient(row.id).Cancel({ runId: row.id }).pipe(Effect.orDie)
          }
          const after = yield* repo.find(row.id)
          return yield* present(Option.getOrElse(after, () => row))
        })

      return {
        start,
        get: (principal, id) => Effect.flatMap(getRow(principal, id), present),
        list: Effect.fn("Runs.list")(function*(principal: Principal, filter: RunFilter, page: PageRequest) {
          const { limit, after } = yield* pageWindow(page)
          const rows = yield* repo.list(principal, filter, limit, after)
          const byRoot = yield* workersOf(rows)
          const runs = yield* Effect.forEach(
            rows,
            (row) => Effect.map(presentWith(row, byRoot.get(row.id) ?? []), (run) => ({ ...row, run }))
          )
          return toPage(runs, limit, (row) => row.run)
        }),
        withdrawFollowup: Effect.fn("Runs.withdrawFollowup")(
          function*(principal: Principal, runId: RunId, followupId: FollowupId) {
            yield* getRow(principal, runId)
            if (!(yield* followups.withdraw(runId, followupId))) {
              return yield* new NotFound({
                code: "followup_not_found",
                message:
                  `Follow-up '${followupId}' is not held for run '${runId}': it was withdrawn, already claimed for delivery, or the run has ended.`
              })
            }
            return { id: followupId, object: "run.followup" as const, deleted: true as const }
          }
        ),
        cancel: Effect.fn("Runs.cancel")(function*(principal: Principal, id: RunId) {
          return yield* cancelRun(yield* getRow(principal, id))
        }),
        cancelThread: Effect.fn("Runs.cancelThread")(function*(principal: Principal, threadId: ThreadId) {
          yield* threads.getRow(principal, threadId)
          const cancelled = yield* threadClient(threadId).CancelActive({ threadId }).pipe(Effect.orDie)
          return { id: threadId, object: "thread.cancel" as const, cancelledRunId: cancelled }
        }),
        stream: Effect.fn("Runs.stream")(function*(principal: Principal, id: RunId, afterSeq: number) {
          const row = yield* getRow(principal, id)
          // Past the event log's retention the stored stream is gone: a content-free stream says so.
          if (pastRetention(row.run, yield* Clock.currentTimeMillis, config.eventRetentionDays)) {
            return unavailableStream(id, afterSeq, (yield* present(row)).usage ?? ZeroUsage)
          }
          return follow(id, afterSeq)
        }),
        startStreaming: Effect.fn("Runs.startStreaming")(function*<E>(
          principal: Principal,
          threadId: ThreadId,
          input: MessageInput,
          idempotencyKey: string | undefined,
          wrap: (start: Effect.Effect<RunReceipt, StartError>) => Effect.Effect<RunReceipt, E>
        ) {
          const scope = yield* Scope.make()
          const watch = yield* Scope.provide(events.watch, scope)
          let created = false
          const receipt = yield* wrap(
            Effect.map(begin(principal, threadId, input, idempotencyKey), ({ receipt, fresh }) => {
              created = fresh
              return receipt
            })
          ).pipe(
            Effect.onError(() => Scope.close(scope, Exit.void))
          )
          const stream = follow(receipt.runId, 0, created ? watch : undefined).pipe(
            Stream.ensuring(Scope.close(scope, Exit.void))
          )
          return { receipt, stream }
        }),
        workerStream: Effect.fn("Runs.workerStream")(
          function*(principal: Principal, rootRunId: RunId, workerRef: WorkerId, afterSeq: number) {
            const root = yield* getRow(principal, rootRunId)
            const found = yield* workers.find(root.id, workerRef)
            if (Option.isNone(found)) {
              return yield* new NotFound({
                code: "worker_not_found",
                message:
                  `Run '${rootRunId}' has no worker '${workerRef}': worker references come from the run's data-svc-task chunks.`
              })
            }
            const worker = found.value
            if (isTerminal(root.run.status) && !isTerminal(worker.run.status)) {
              return yield* new Conflict({
                code: "run_not_active",
                message:
                  `Run '${rootRunId}' has ended (${root.run.status}) but its worker '${workerRef}' has not yet: the run's end stops it. Retry in a moment: once it has ended, its stream replays.`
              })
            }
            if (pastRetention(worker.run, yield* Clock.currentTimeMillis, config.eventRetentionDays)) {
              return { runId: worker.id, stream: unavailableStream(worker.id, afterSeq, worker.run.usage ?? ZeroUsage) }
            }
            return { runId: worker.id, stream: follow(worker.id, afterSeq) }
          }
        ),
        warm: Effect.fn("Runs.warm")(function*(principal: Principal, threadId: ThreadId) {
          yield* threads.getRow(principal, threadId)
        }),
        cancelAgentRuns: Effect.fn("Runs.cancelAgentRuns")(function*(principal: Principal, agentId: AgentId) {
          yield* agents.getRow(principal, agentId)
          // Every active run, page by page (the agent may have any number of threads).
          for (
            const status of ["queued", "preparing", "running", "waiting_for_approval", "waiting_for_input"] as const
          ) {
            let after: RunRow | undefined = undefined
            do {
              const page: ReadonlyArray<RunRow> = yield* repo.list(principal, { agentId, status }, 100, after)
              yield* Effect.forEach(page, cancelRun, { discard: true, concurrency: 8 })
              after = page.length > 100 ? page[page.length - 1] : undefined
            } while (after !== undefined)
          }
        })
      }
    })
  )
}

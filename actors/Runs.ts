/**
 * Runs (spec 4.2 messages / cancel / warm, 4.3): starting a run captures the
 * configuration and plan, claims the thread atomically (409 thread_busy when
 * another run holds it) and hands the run to its RunEntity; reads, lists,
 * cancellation and the durable stream.
 */
import { Context, DateTime, Effect, Exit, Layer, Option, Scope, Stream } from "effect"
import { Conflict, InvalidRequest, NotFound, PermissionDenied } from "../domain/Errors.ts"
import type { PageOf, PageRequest } from "../domain/Page.ts"
import type { Principal } from "../domain/Principal.ts"
import { isTerminal, type MessageInput, type Run, type RunReceipt, ZeroUsage } from "../domain/Run.ts"
import { RunEntity } from "./RunEntity.ts"
import { ThreadEntity } from "./ThreadEntity.ts"
import { Agents } from "../src/agents/Agents.ts"
import { Bands } from "../src/bands/Bands.ts"
import { ServiceConfig } from "../src/config/ServiceConfig.ts"
import { newId } from "../src/Ids.ts"
import { requireOwned } from "../src/Ownership.ts"
import { pageWindow, toPage } from "../src/store/Cursor.ts"
import { Threads } from "../src/threads/Threads.ts"
import { nowIso } from "../src/Time.ts"
import { HttpConnections } from "../src/tools/HttpConnections.ts"
import { ToolServers } from "../src/tools/ToolServers.ts"
import { EventLog, type SequencedChunk, type Watch } from "../src/runs/EventLog.ts"
import { FollowupRepo } from "../src/runs/FollowupRepo.ts"
import { DefaultMaxSteps, type PlannedHttpConnection, type PlannedToolServer, type RunPlan } from "../src/runs/RunPlan.ts"
import { type NewRunRow, type RunFilter, RunRepo, type RunRow } from "../src/runs/RunRepo.ts"
import * as StructuredOutput from "../src/runs/StructuredOutput.ts"
import { Sharding } from "effect/cluster"

export type StartError = InvalidRequest | NotFound | PermissionDenied | Conflict

/** Only a message that is nothing but text can join a running turn. */
const isPlainText = (input: MessageInput): boolean => {
  const { input: body, metadata: _metadata, idempotencyKey: _key, ...options } = input
  const textOnly = typeof body === "string" || (body.attachments === undefined || body.attachments.length === 0)
  return textOnly && Object.keys(options).length === 0
}

const isIanaZone = (tz: string): boolean => /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz) && Option.isSome(DateTime.zoneMakeNamed(tz))

const inputText = (input: MessageInput["input"]) =>
  Effect.gen(function*() {
    if (typeof input === "string") {
      if (input.length === 0) return yield* InvalidRequest.forField("input", "input must not be empty.")
      return input
    }
    if ((input.attachments?.length ?? 0) > 0) {
      return yield* InvalidRequest.forField(
        "input.attachments",
        "input.attachments references files, but this deployment has no files API: no such file exists."
      )
    }
    if (input.text === undefined || input.text.length === 0) {
      return yield* InvalidRequest.forField("input.text", "Object input needs non-empty text or at least one attachment.")
    }
    return input.text
  })

export class Runs extends Context.Service<Runs, {
  readonly start: (
    principal: Principal,
    threadId: string,
    input: MessageInput,
    idempotencyKey: string | undefined
  ) => Effect.Effect<RunReceipt, StartError>
  readonly get: (principal: Principal, id: string) => Effect.Effect<Run, NotFound | PermissionDenied>
  readonly list: (principal: Principal, filter: RunFilter, page: PageRequest) => Effect.Effect<PageOf<Run>, InvalidRequest>
  readonly cancel: (principal: Principal, id: string) => Effect.Effect<Run, NotFound | PermissionDenied>
  readonly cancelThread: (
    principal: Principal,
    threadId: string
  ) => Effect.Effect<{ readonly id: string; readonly object: "thread.cancel"; readonly cancelledRunId: string | null }, NotFound | PermissionDenied>
  readonly stream: (
    principal: Principal,
    id: string,
    afterSeq: number
  ) => Effect.Effect<Stream.Stream<SequencedChunk>, NotFound | PermissionDenied>
  /**
   * Starts a run (through `wrap`, e.g. idempotency) and returns its stream,
   * watched from before the run existed: the caller started it, so no lookup,
   * and nothing is read back unless `wrap` answered with an earlier run.
   */
  readonly startStreaming: <E>(
    principal: Principal,
    threadId: string,
    input: MessageInput,
    idempotencyKey: string | undefined,
    wrap: (start: Effect.Effect<RunReceipt, StartError>) => Effect.Effect<RunReceipt, E>
  ) => Effect.Effect<{ readonly receipt: RunReceipt; readonly stream: Stream.Stream<SequencedChunk> }, E>
  readonly warm: (principal: Principal, threadId: string) => Effect.Effect<void, NotFound | PermissionDenied>
  /** Cancels every active run of the agent's threads (before the agent is deleted). */
  readonly cancelAgentRuns: (principal: Principal, agentId: string) => Effect.Effect<void, NotFound | PermissionDenied>
  readonly withdrawFollowup: (
    principal: Principal,
    runId: string,
    followupId: string
  ) => Effect.Effect<{ readonly id: string; readonly object: "run.followup"; readonly deleted: true }, NotFound | PermissionDenied>
}>()("svc/Runs") {
  static readonly layer = Layer.effect(Runs)(
    Effect.gen(function*() {
      const repo = yield* RunRepo
      const followups = yield* FollowupRepo
      const events = yield* EventLog
      const threads = yield* Threads
      const agents = yield* Agents
      const bands = yield* Bands
      const toolServers = yield* ToolServers
      const httpConnections = yield* HttpConnections
      const config = yield* ServiceConfig
      const sharding = yield* Sharding.Sharding
      const runClient = yield* RunEntity.client.pipe(Effect.provideService(Sharding.Sharding, sharding))
      const threadClient = yield* ThreadEntity.client.pipe(Effect.provideService(Sharding.Sharding, sharding))

      const getRow = (principal: Principal, id: string) =>
        repo.find(id).pipe(Effect.flatMap(requireOwned<RunRow>(principal, "run", id)))

      /** The Run resource: `queuedFollowups` appears whenever held messages remain. */
      const present = (row: RunRow) =>
        Effect.map(followups.queued(row.id), (queued): Run =>
          queued.length === 0 && row.run.status !== "waiting_for_approval" && row.run.status !== "waiting_for_input"
            ? row.run
            : { ...row.run, queuedFollowups: queued })

      const start = Effect.fn("Runs.start")(function*(
        principal: Principal,
        threadId: string,
        input: MessageInput,
        idempotencyKey: string | undefined
      ) {
        const threadRow = yield* threads.getRow(principal, threadId)
        const thread = threadRow.thread
        const { agent } = yield* agents.getRow(principal, thread.agentId)
        const text = yield* inputText(input.input)

        const band = input.band ?? thread.band ?? agent.band
        if (!bands.isAvailable(band)) {
          return yield* InvalidRequest.forField("band", `Band '${band}' is not available on this deployment (see GET /v1/bands).`)
        }
        const inheritedStrict = agent.policies.dataHandling === "strict" || thread.dataHandling === "strict"
        if (inheritedStrict && input.dataHandling === "standard") {
          return yield* InvalidRequest.forField(
            "dataHandling",
            "This agent or thread requires strict data handling; a run cannot relax it to 'standard'."
          )
        }
        const dataHandling = inheritedStrict || input.dataHandling === "strict" ? "strict" : "standard"
        if (dataHandling === "strict" && !bands.isStrictAvailable(band)) {
          return yield* InvalidRequest.forField(
            "dataHandling",
            `Strict data handling is required but band '${band}' has no verified zero-retention route.`,
            "strict_data_handling_unavailable"
          )
        }
        const timeZone = input.timeZone ?? thread.timeZone ?? "UTC"
        if (!isIanaZone(timeZone)) return yield* InvalidRequest.forField("timeZone", `'${timeZone}' is not a valid IANA time zone.`)
        if (input.outputSchema !== undefined) {
          const problem = StructuredOutput.schemaProblem(input.outputSchema)
          if (problem !== undefined) return yield* InvalidRequest.forField("outputSchema", `outputSchema is not a valid JSON Schema: ${problem}.`)
        }

        const planned: Array<PlannedToolServer> = []
        for (const serverId of agent.capabilities.mcp?.toolServerIds ?? []) {
          const loaded = yield* toolServers.load(principal, serverId).pipe(Effect.option)
          if (Option.isSome(loaded)) planned.push({ id: serverId, name: loaded.value.row.name, configVersion: loaded.value.row.configVersion, config: loaded.value.config })
        }
        const plannedHttp: Array<PlannedHttpConnection> = []
        for (const connectionId of agent.capabilities.http?.connectionIds ?? []) {
          const loaded = yield* httpConnections.load(principal, connectionId).pipe(Effect.option)
          if (Option.isSome(loaded)) {
            const { row, config: connection } = loaded.value
            plannedHttp.push({ id: connectionId, name: row.name, configVersion: row.configVersion, config: connection })
          }
        }
        const route = config.bands[band].route ?? "scripted"
        const plan: RunPlan = {
          input: text,
          route,
          context: [...agent.context, ...thread.context].map((b) => b.content),
          skills: agent.capabilities.skills ?? [],
          userInteraction: agent.capabilities.userInteraction === true,
          toolServers: planned,
          httpConnections: plannedHttp,
          approvals: agent.approvals,
          maxSteps: input.maxSteps ?? agent.policies.maxStepsDefault ?? DefaultMaxSteps,
          maxDurationMs: input.maxDurationMs ?? agent.policies.maxDurationMsDefault,
          budgetCents: input.budgetCents ?? null,
          outputSchema: input.outputSchema ?? null,
          streamProgress: input.streamProgress === true,
          streamReasoning: input.streamReasoning === true
        }
        const now = yield* nowIso
        const id = yield* newId("run")
        const row: NewRunRow = {
          id,
          createdAt: now,
          organizationId: principal.organizationId,
          workspaceId: principal.workspaceId,
          plan,
          idempotencyKey: idempotencyKey ?? null,
          run: {
            id,
            object: "run",
            threadId,
            agentId: agent.id,
            status: "queued",
            terminalReason: null,
            usage: ZeroUsage,
            config: { band, mediaFidelity: agent.policies.mediaFidelity, dataHandling, timeZone },
            metadata: input.metadata ?? {},
            createdAt: now,
            startedAt: null,
            completedAt: null
          }
        }
        const began = yield* threadClient(threadId).Begin({
          prepared: {
            run: row.run,
            plan,
            organizationId: row.organizationId,
            workspaceId: row.workspaceId,
            idempotencyKey: row.idempotencyKey,
            holdableText: isPlainText(input) ? text : null
          }
        }).pipe(Effect.orDie)
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
        return {
          runId: id,
          threadId,
          agentId: agent.id,
          organizationId: principal.organizationId,
          status: "queued" as const,
          ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
          createdAt: now
        }
      })

      /** A stream ends at the run's final end, or at a turn's end while the run is parked. */
      const follow = (id: string, afterSeq: number, watch?: Watch) =>
        events.follow(id, afterSeq, Effect.map(repo.find(id), (row) =>
          Option.match(row, {
            onNone: () => true,
            onSome: (r) => isTerminal(r.run.status) || r.run.status === "waiting_for_approval" || r.run.status === "waiting_for_input"
          })), watch)

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
          const runs = yield* Effect.forEach(rows, (row) => Effect.map(present(row), (run) => ({ ...row, run })))
          return toPage(runs, limit, (row) => row.run)
        }),
        withdrawFollowup: Effect.fn("Runs.withdrawFollowup")(function*(principal: Principal, runId: string, followupId: string) {
          yield* getRow(principal, runId)
          if (!(yield* followups.withdraw(runId, followupId))) {
            return yield* new NotFound({
              code: "followup_not_found",
              message: `Follow-up '${followupId}' is not held for run '${runId}': it was withdrawn, already claimed for delivery, or the run has ended.`
            })
          }
          return { id: followupId, object: "run.followup" as const, deleted: true as const }
        }),
        cancel: Effect.fn("Runs.cancel")(function*(principal: Principal, id: string) {
          return yield* cancelRun(yield* getRow(principal, id))
        }),
        cancelThread: Effect.fn("Runs.cancelThread")(function*(principal: Principal, threadId: string) {
          yield* threads.getRow(principal, threadId)
          const cancelled = yield* threadClient(threadId).CancelActive({ threadId }).pipe(Effect.orDie)
          return { id: threadId, object: "thread.cancel" as const, cancelledRunId: cancelled }
        }),
        stream: Effect.fn("Runs.stream")(function*(principal: Principal, id: string, afterSeq: number) {
          yield* getRow(principal, id)
          return follow(id, afterSeq)
        }),
        startStreaming: Effect.fn("Runs.startStreaming")(function*<E>(
          principal: Principal,
          threadId: string,
          input: MessageInput,
          idempotencyKey: string | undefined,
          wrap: (start: Effect.Effect<RunReceipt, StartError>) => Effect.Effect<RunReceipt, E>
        ) {
          const scope = yield* Scope.make()
          const watch = yield* Scope.provide(events.watch, scope)
          let created = false
          const receipt = yield* wrap(Effect.tap(start(principal, threadId, input, idempotencyKey), () => Effect.sync(() => (created = true)))).pipe(
            Effect.onError(() => Scope.close(scope, Exit.void))
          )
          const stream = follow(receipt.runId, 0, created ? watch : undefined).pipe(Stream.ensuring(Scope.close(scope, Exit.void)))
          return { receipt, stream }
        }),
        warm: Effect.fn("Runs.warm")(function*(principal: Principal, threadId: string) {
          yield* threads.getRow(principal, threadId)
        }),
        cancelAgentRuns: Effect.fn("Runs.cancelAgentRuns")(function*(principal: Principal, agentId: string) {
          yield* agents.getRow(principal, agentId)
          for (const status of ["queued", "preparing", "running", "waiting_for_approval", "waiting_for_input"] as const) {
            const active = yield* repo.list(principal, { agentId, status }, 100, undefined)
            yield* Effect.forEach(active, cancelRun, { discard: true, concurrency: 8 })
          }
        })
      }
    })
  )
}

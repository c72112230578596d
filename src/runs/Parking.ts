/**
 * Park and resume (spec 3.1 waiting states, 4.4): a step whose calls wait for
 * a person opens one interaction per waiting call, stores the step on the run
 * (the parked run holds no fiber) and announces the requests. A step whose
 * calls delegated tasks parks the same way on its workers (subagents), without
 * ending the turn's stream. Resuming settles each waiting call from its
 * interaction (answers, approvals run now, denials) or its worker's end, and
 * checkpoints the step before its results are announced; an approved
 * delegation parks the step again, on its new worker.
 */
import { Clock, Context, Data, Effect, Layer } from "effect"
import type { Chunk } from "../../domain/Chunk.ts"
import type { AssistantMessage, Message, ToolCall } from "../../domain/Conversation.ts"
import type { Interaction } from "../../domain/Interaction.ts"
import { type ParkRecord, parkWindowMs, type PendingCall } from "../../domain/Park.ts"
import { type UsageTotal, ZeroUsage } from "../../domain/Run.ts"
import type { PendingWorker } from "../../domain/Worker.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { ApprovalMemory } from "../store/ApprovalMemory.ts"
import { InteractionRepo } from "../store/InteractionRepo.ts"
import { RunRepo, type RunRow } from "../store/RunRepo.ts"
import { WorkerRepo } from "../store/WorkerRepo.ts"
import { nowIso, toIso } from "../Time.ts"
import { answerText } from "../tools/BuiltinTools.ts"
import type { ToolOutcome } from "../tools/ToolOutcome.ts"
import { Delegation, type Spawned } from "./Delegation.ts"
import { runChange, type Writer } from "./EventLog.ts"
import { denied, inCallOrder, Outcome, previewOf, settle, type Settled } from "./Outcome.ts"
import * as Progress from "./Progress.ts"
import type { Waiting } from "./ToolGate.ts"

/** A waiting call of the parked step with its interaction (undefined: the interaction is gone). */
export interface ParkedCall {
  readonly pending: PendingCall
  readonly interaction: Interaction | undefined
}

/** The step that parks: what it stores and what it announces. */
export interface ParkingStep {
  readonly row: RunRow
  readonly writer: Writer
  readonly step: number
  readonly pendingUser: ReadonlyArray<Message>
  readonly assistant: AssistantMessage
  /** Results of the step's calls that did not wait, in call order. */
  readonly settled: ReadonlyArray<Settled>
  readonly waits: ReadonlyArray<{ readonly call: ToolCall; readonly gate: Waiting }>
  /** Delegated calls whose workers run meanwhile. */
  readonly workers: ReadonlyArray<PendingWorker>
  readonly usage: UsageTotal
}

/** What a resumed step does with its approved calls. */
export interface ResumeCalls {
  /** Runs an approved call of the parked step (a tool gone since reports tools_changed). */
  readonly run: (call: ToolCall, stepCalls: ReadonlyArray<ToolCall>) => Effect.Effect<ToolOutcome>
  /** Whether the call delegates a task (it then gets a worker, and the step waits on it). */
  readonly isDelegation: (name: string) => boolean
  readonly delegate: (calls: ReadonlyArray<ToolCall>) => Effect.Effect<Spawned>
}

/** How a resumed step went: done (checkpointed), or parked again on the workers of approved delegations. */
export type Resumed = Data.TaggedEnum<{
  Done: { readonly usage: UsageTotal; readonly messages: ReadonlyArray<Message> }
  Delegated: {}
}>
export const Resumed = Data.taggedEnum<Resumed>()

export class Parking extends Context.Service<Parking, {
  /** The waiting calls of a parked run with their interactions. */
  readonly parkedCalls: (row: RunRow) => Effect.Effect<ReadonlyArray<ParkedCall>>
  readonly park: (step: ParkingStep) => Effect.Effect<Outcome>
  /** Finishes the parked step from its interactions and workers; done: the run's usage at the park and the step's messages. */
  readonly resume: (
    row: RunRow,
    writer: Writer,
    calls: ReadonlyArray<ParkedCall>,
    resumeCalls: ResumeCalls
  ) => Effect.Effect<Resumed>
}>()("svc/Parking") {
  static readonly layer = Layer.effect(Parking)(
    Effect.gen(function*() {
      const repo = yield* RunRepo
      const interactions = yield* InteractionRepo
      const memory = yield* ApprovalMemory
      const config = yield* ServiceConfig
      const ids = yield* IdGenerator
      const workers = yield* WorkerRepo
      const delegation = yield* Delegation

      /**
       * Stores the parked step with the chunks emitted so far, in one statement under the execution's
       * claim (a kill in between would leave a park whose requests or results nobody was told of). A
       * root waiting only on its workers stays `running`, with no deadline of its own.
       */
      const storePark = (
        writer: Writer,
        record: ParkRecord,
        status: "waiting_for_approval" | "waiting_for_input" | "running",
        deadline: string | null
      ) => writer.commit([runChange({ status, usage: record.usage, park: { record, deadline } })])

      /** Opens the interaction a parked call waits on; returns what the park stores and announces. */
      const open = Effect.fn("Parking.open")(function*(row: RunRow, step: number, call: ToolCall, waits: Waiting) {
        const now = yield* nowIso
        const deadline = toIso(
          (yield* Clock.currentTimeMillis) + parkWindowMs(config.maxParkMs, row.plan?.maxDurationMs ?? null)
        )
        const approval = waits._tag === "Approval"
        // The id the hook already saw, when a hook was asked.
        const id = approval && waits.interactionId !== undefined ? waits.interactionId : yield* ids.make("interaction")
        yield* interactions.insert({
          id,
          createdAt: now,
          organizationId: row.organizationId,
          workspaceId: row.workspaceId,
          deadline,
          interaction: {
            id,
            object: "interaction",
            runId: row.id,
            rootRunId: row.plan?.worker?.rootRunId ?? row.id,
            workerRef: row.plan?.worker?.workerRef ?? null,
            threadId: row.run.threadId,
            agentId: row.run.agentId,
            kind: approval ? "approval_request" : "question",
            status: "pending",
            stepNumber: step + 1,
            toolName: call.name,
            toolCallId: call.id,
            hookId: approval ? waits.hookId : null,
            ...(approval ? { input: call.input, preview: previewOf(call) } : {}),
            decision: null,
            reason: approval ? waits.reason : null,
            request: approval ? null : waits.request,
            resolution: null,
            expiresAt: deadline,
            createdAt: now,
            resolvedAt: null,
            updatedAt: now
          }
        })
        const request = approval
          ? {
            kind: "approval_request",
            toolName: call.name,
            input: call.input,
            preview: previewOf(call),
            options: ["approve", "deny"],
            ...(waits.reason === null ? {} : { reason: waits.reason })
          }
          : { kind: "question", ...waits.request }
        const pending: PendingCall = {
          toolCallId: call.id,
          interactionId: id,
          kind: approval ? "approval_request" : "question",
          remember: approval && waits.remember
        }
        const chunk: Chunk = {
          type: "data-svc-input-requested",
          data: { interactionId: id, toolCallId: call.id, request, expiresAt: deadline }
        }
        return { deadline, pending, chunk }
      })

      const park = Effect.fn("Parking.park")(function*(s: ParkingStep) {
        const opened = yield* Effect.forEach(s.waits, ({ call, gate }) => open(s.row, s.step, call, gate))
        const record: ParkRecord = {
          step: s.step,
          pendingUser: s.pendingUser,
          assistant: s.assistant,
          settled: s.settled.map((r) => r.message),
          pending: opened.map((o) => o.pending),
          ...(s.workers.length === 0 ? {} : { workers: s.workers }),
          usage: s.usage
        }
        // Waiting only on its workers, a run stays running (and has no park deadline of its own).
        const status = opened.length === 0
          ? "running"
          : opened.some((o) => o.pending.kind === "approval_request")
          ? "waiting_for_approval"
          : "waiting_for_input"
        for (const r of s.settled) for (const c of r.chunks) yield* s.writer.emit(c)
        for (const o of opened) yield* s.writer.emit(o.chunk)
        // Waiting on its workers alone, the run says on which (streamProgress); a pause says it with its requests.
        if (opened.length === 0) {
          yield* Progress.make(s.row.id, s.row.plan?.streamProgress === true, s.writer).summary(
            Progress.tasksText(s.assistant.toolCalls, s.workers.map((w) => w.toolCallId))
          )
        }
        yield* storePark(s.writer, record, status, opened[0]?.deadline ?? null)
        // A worker waiting on a person: its root shows it (spec 2.3, 3.1).
        const tree = s.row.plan?.worker
        if (tree !== undefined && opened.length > 0) yield* workers.refreshTreeStatus(tree.rootRunId, yield* nowIso)
        return opened.length === 0 ? Outcome.Delegated() : Outcome.Parked()
      })

      const parkedCalls = Effect.fn("Parking.parkedCalls")(function*(row: RunRow) {
        if (row.park === null) return []
        const byId = new Map((yield* interactions.ofRun(row.id)).map((i) => [i.id, i.interaction]))
        return row.park.pending.map((pending): ParkedCall => ({
          pending,
          interaction: byId.get(pending.interactionId)
        }))
      })

      const resume = Effect.fn("Parking.resume")(function*(
        row: RunRow,
        writer: Writer,
        parked: ReadonlyArray<ParkedCall>,
        resumeCalls: ResumeCalls
      ) {
        const park = row.park
        if (park === null) return Resumed.Done({ usage: row.run.usage ?? ZeroUsage, messages: [] })
        const calls = park.assistant.toolCalls
        const settledCalls = parked.flatMap(({ pending, interaction }) => {
          const call = calls.find((c) => c.id === pending.toolCallId)
          return call === undefined || interaction === undefined ? [] : [{ pending, interaction, call }]
        })
        const finished = yield* delegation.results(row)
        // A park on people ended the turn's stream: the resumed turn opens again and names the calls it settles.
        if (park.pending.length > 0) {
          yield* writer.emit({ type: "start", messageId: row.id })
          yield* writer.emit({ type: "start-step" })
          const named = new Set([...settledCalls.map((s) => s.call.id), ...finished.map((f) => f.message.toolCallId)])
          for (const call of calls.filter((c) => named.has(c.id))) {
            yield* writer.emit({
              type: "tool-input-available",
              toolCallId: call.id,
              toolName: call.name,
              input: call.input
            })
          }
        }
        // Stored before they fire, under the claim (an execution that lost it stops here).
        if (settledCalls.length > 0) yield* writer.flush
        // The approved calls run concurrently, as a step's calls do (each family keeps its own lanes).
        const toDelegate: Array<ToolCall> = []
        const answered: Array<Settled> = []
        // Approved calls that take long are said on the stream (streamProgress), as in a step.
        const progress = Progress.make(row.id, row.plan?.streamProgress === true, writer)
        yield* progress.calls(settledCalls, ({ pending, interaction, call }) =>
          Effect.asVoid(Effect.gen(function*() {
            if (interaction.kind === "question") {
              return answered.push(
                settle(call, {
                  output: interaction.resolution ?? { dismissed: true },
                  text: answerText(interaction),
                  isError: false
                })
              )
            }
            if (interaction.decision !== "allow") return answered.push(denied(call, interaction.reason))
            if (pending.remember) yield* memory.remember(row.run.threadId, call.name, call.input, yield* nowIso)
            if (resumeCalls.isDelegation(call.name)) return toDelegate.push(call)
            return answered.push(settle(call, yield* resumeCalls.run(call, calls)))
          })))
        const spawned = toDelegate.length === 0 ? undefined : yield* resumeCalls.delegate(toDelegate)
        const fresh = inCallOrder(calls, [...answered, ...finished, ...(spawned?.refused ?? [])])
        const earlier: Array<Settled> = park.settled.map((message) => ({ message, chunks: [] }))
        const results = inCallOrder(calls, [...earlier, ...fresh])
        if (spawned !== undefined && spawned.workers.length > 0) {
          // Approved delegations: the step waits on their workers now.
          const record: ParkRecord = {
            ...park,
            settled: results.map((r) => r.message),
            pending: [],
            workers: spawned.workers
          }
          for (const a of fresh) for (const c of a.chunks) yield* writer.emit(c)
          yield* progress.summary(Progress.tasksText(calls, spawned.workers.map((w) => w.toolCallId)))
          yield* storePark(writer, record, "running", null)
          return Resumed.Delegated()
        }
        const messages = [...park.pendingUser, park.assistant, ...results.map((r) => r.message)]
        // The step's checkpoint, its results and the run leaving its park go in one statement (under the
        // execution's claim): a kill in between would leave results nobody was told of, or told twice.
        for (const a of fresh) for (const c of a.chunks) yield* writer.emit(c)
        yield* writer.emit({ type: "finish-step" })
        yield* writer.commit([
          repo.statements.checkpoint(row.id, park.step, messages, park.usage, yield* nowIso),
          runChange({ status: "running", clearPark: true, usage: park.usage, progressed: true })
        ])
        return Resumed.Done({ usage: park.usage, messages })
      })

      return { parkedCalls, park, resume }
    })
  )
}

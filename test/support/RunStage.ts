/**
 * The run loop's parts on their own, over a fresh PostgreSQL database: the
 * real repositories, event log, tool gate, parking, finalization and approval hooks
 * (no HTTP listener, no cluster), and runs staged the way a thread's turn
 * creates them (agent and thread through their services, the run created
 * with the thread claimed in one statement). Built inside @effect/vitest's
 * `layer`, so every timestamp comes from TestClock.
 */
import { Effect, Layer, Option } from "effect"
import type { ToolCall } from "../../domain/Conversation.ts"
import type { AgentId, RunId, ThreadId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import { type Run, type UsageTotal, ZeroUsage } from "../../domain/Run.ts"
import { DefaultMaxSteps, type RunPlan } from "../../domain/RunPlan.ts"
import { Agents } from "../../src/agents/Agents.ts"
import { ServiceConfig } from "../../src/config/ServiceConfig.ts"
import { IdGenerator } from "../../src/IdGenerator.ts"
import { ToolApprovalHooks } from "../../src/interactions/ToolApprovalHooks.ts"
import { Outbound } from "../../src/outbound/Outbound.ts"
import { Delegation, WorkerStarts } from "../../src/runs/Delegation.ts"
import { EventLog, type Writer } from "../../src/runs/EventLog.ts"
import { Finalize } from "../../src/runs/Finalize.ts"
import { Parking, type ParkingStep } from "../../src/runs/Parking.ts"
import { ToolGate } from "../../src/runs/ToolGate.ts"
import * as MasterKeys from "../../src/secrets/MasterKeys.ts"
import { ApprovalMemory } from "../../src/store/ApprovalMemory.ts"
import * as Database from "../../src/store/Database.ts"
import { EventRepo } from "../../src/store/EventRepo.ts"
import { InteractionRepo } from "../../src/store/InteractionRepo.ts"
import * as Migrations from "../../src/store/Migrations.ts"
import { RunRepo, type RunRow } from "../../src/store/RunRepo.ts"
import { WorkerRepo } from "../../src/store/WorkerRepo.ts"
import { Threads } from "../../src/threads/Threads.ts"
import { nowIso } from "../../src/Time.ts"
import { ThreadWorkspaces } from "../../src/workspace/ThreadWorkspaces.ts"
import { testDatabase } from "./TestDatabase.ts"
import { baseConfig, setupTimeout } from "./TestServer.ts"

/** The caller every staged resource belongs to. */
export const principal: Principal = { keyId: "key_stage", organizationId: "org_stage", workspaceId: "prod" }

/** A plan as a run on the scripted route captures it, with `overrides`. */
export const planWith = (overrides: Partial<RunPlan> = {}): RunPlan => ({
  input: "hello",
  route: "scripted",
  context: [],
  skills: [],
  userInteraction: false,
  toolServers: [],
  httpConnections: [],
  approvals: null,
  maxSteps: DefaultMaxSteps,
  maxDurationMs: null,
  budgetCents: null,
  outputSchema: null,
  streamProgress: false,
  streamReasoning: false,
  ...overrides
})

/** The stage has no cluster: a worker a staged run delegates to stays queued (no runner takes it). */
const noRunner = Layer.succeed(WorkerStarts)({
  start: () => Effect.void,
  besideRoot: (_root, candidate) => Effect.succeed(candidate(0))
})

const parts = Layer.mergeAll(ToolGate.layer, Finalize.layer, Parking.layer).pipe(
  Layer.provideMerge(Delegation.layer.pipe(Layer.provide(noRunner))),
  Layer.provideMerge(EventLog.layer),
  Layer.provideMerge(Layer.mergeAll(
    RunRepo.layer,
    WorkerRepo.layer,
    EventRepo.layer,
    InteractionRepo.layer,
    ApprovalMemory.layer,
    ToolApprovalHooks.layer,
    Threads.layer,
    Agents.layer
  )),
  Layer.provideMerge(ThreadWorkspaces.layerLive),
  Layer.provideMerge(Layer.mergeAll(MasterKeys.layer, Outbound.layer({ allowPrivate: true, dnsServers: [] }))),
  Layer.provideMerge(IdGenerator.layer),
  Layer.provideMerge(Migrations.layer),
  Layer.provideMerge(Database.layer)
)

/** The parts on a fresh database (dropped when the layer's scope closes). */
export const layer = Layer.unwrap(
  Effect.map(testDatabase, (db) => parts.pipe(Layer.provideMerge(Layer.succeed(ServiceConfig)(baseConfig(db.url, 0)))))
)

export { setupTimeout }

/** An agent and a thread on it, created through their services. */
export const agentWithThread = Effect.gen(function*() {
  const agent = yield* Effect.orDie((yield* Agents).create(principal, {}))
  const thread = yield* Effect.orDie((yield* Threads).create(principal, { agentId: agent.id }))
  return { agent, thread }
})

/** A second thread of the same agent. */
export const threadOf = (agentId: AgentId) =>
  Effect.gen(function*() {
    return yield* Effect.orDie((yield* Threads).create(principal, { agentId }))
  })

/** A run as a turn creates it: queued on its thread, nothing used yet. */
export const queuedRun = (
  id: RunId,
  target: { readonly threadId: ThreadId; readonly agentId: AgentId },
  createdAt: string
): Run => ({
  id,
  object: "run",
  threadId: target.threadId,
  agentId: target.agentId,
  status: "queued",
  terminalReason: null,
  usage: ZeroUsage,
  config: { band: "core", mediaFidelity: "standard", dataHandling: "standard", timeZone: "UTC" },
  metadata: {},
  createdAt,
  startedAt: null,
  completedAt: null
})

/**
 * A queued run of `plan` on `threadId` (a new thread of a new agent when absent),
 * created with its thread claimed as a turn does; returns the stored row.
 */
export const stageRun = (
  options: { readonly plan?: RunPlan; readonly threadId?: ThreadId; readonly agentId?: AgentId } = {}
) =>
  Effect.gen(function*() {
    const repo = yield* RunRepo
    const target = options.threadId !== undefined && options.agentId !== undefined
      ? { threadId: options.threadId, agentId: options.agentId }
      : yield* Effect.map(agentWithThread, ({ agent, thread }) => ({ threadId: thread.id, agentId: agent.id }))
    const id = yield* (yield* IdGenerator).make("run")
    const now = yield* nowIso
    const created = yield* repo.createClaimed({
      id,
      createdAt: now,
      organizationId: principal.organizationId,
      workspaceId: principal.workspaceId,
      plan: options.plan ?? planWith(),
      idempotencyKey: null,
      run: queuedRun(id, target, now)
    })
    if (created !== "created") return yield* Effect.die(new Error(`thread ${target.threadId} is busy`))
    return yield* reload(id)
  })

/** The step of `row` that parks on a person's approval of `call` (no hook), its only call. */
export const approvalStep = (row: RunRow, writer: Writer, call: ToolCall, usage: UsageTotal): ParkingStep => ({
  row,
  writer,
  step: 0,
  pendingUser: [],
  assistant: { role: "assistant", content: "", toolCalls: [call] },
  settled: [],
  waits: [{ call, gate: { _tag: "Approval", hookId: null, reason: null, remember: false } }],
  workers: [],
  usage
})

/** The run's row as stored now. */
export const reload = (runId: RunId): Effect.Effect<RunRow, never, RunRepo> =>
  Effect.gen(function*() {
    const found = yield* (yield* RunRepo).find(runId)
    if (Option.isNone(found)) return yield* Effect.die(new Error(`run ${runId} is not stored`))
    return found.value
  })

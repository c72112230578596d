/** A run's row as the service reads it: the stored columns decoded into the Run resource and what executing it needs. */
import { Effect, Option, Schema } from "effect"
import { AgentId, RunId, ThreadId } from "../../domain/Ids.ts"
import { Metadata } from "../../domain/Metadata.ts"
import { ParkRecord } from "../../domain/Park.ts"
import { type Run, RunConfig, RunError, RunStatus, UsageTotal } from "../../domain/Run.ts"
import { RunPlan } from "../../domain/RunPlan.ts"
import type { Position } from "./Cursor.ts"

export interface RunRow extends Position {
  readonly id: RunId
  readonly run: Run
  readonly organizationId: string
  readonly workspaceId: string
  /** Undefined when the stored plan cannot be read (the recovery pass finalizes such runs). */
  readonly plan: RunPlan | undefined
  readonly idempotencyKey: string | null
  /** Bumped at each park, so each resume is a distinct persisted Start. */
  readonly generation: number
  /** The latest claim of the run (migration 0020_fencing): the executions and finalizations that took it. */
  readonly attempt: number
  readonly park: ParkRecord | null
  readonly parkDeadline: string | null
}

/** What creating a run needs: a new run has no park. */
export type NewRunRow = Omit<RunRow, "generation" | "park" | "parkDeadline" | "attempt">

const decodePlan = Schema.decodeUnknownOption(RunPlan)

const Row = Schema.Struct({
  id: RunId,
  organization_id: Schema.String,
  workspace_id: Schema.String,
  thread_id: ThreadId,
  agent_id: AgentId,
  status: RunStatus,
  terminal_reason: Schema.NullOr(Schema.String),
  error: Schema.NullOr(RunError),
  usage: UsageTotal,
  config: RunConfig,
  plan: Schema.Unknown,
  metadata: Metadata,
  idempotency_key: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(Schema.String),
  generation: Schema.Number,
  attempt: Schema.Number,
  park: Schema.NullOr(ParkRecord),
  park_deadline: Schema.NullOr(Schema.String)
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))

const toRow = (r: typeof Row.Type): RunRow => ({
  id: r.id,
  createdAt: r.created_at,
  organizationId: r.organization_id,
  workspaceId: r.workspace_id,
  plan: Option.getOrUndefined(decodePlan(r.plan)),
  idempotencyKey: r.idempotency_key,
  generation: r.generation,
  attempt: r.attempt,
  park: r.park,
  parkDeadline: r.park_deadline,
  run: {
    id: r.id,
    object: "run",
    threadId: r.thread_id,
    agentId: r.agent_id,
    status: r.status,
    terminalReason: r.terminal_reason,
    usage: r.usage,
    ...(r.error === null ? {} : { error: r.error }),
    config: r.config,
    metadata: r.metadata,
    createdAt: r.created_at,
    startedAt: r.started_at,
    completedAt: r.completed_at
  }
})

/** Rows of `SELECT * FROM runs ...` as RunRows (WorkerRepo reads worker runs with it). */
export const toRunRows = (rows: unknown): Effect.Effect<ReadonlyArray<RunRow>> =>
  decodeRows(rows).pipe(Effect.map((decoded) => decoded.map(toRow)), Effect.orDie)

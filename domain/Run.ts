/** Runs (spec 2.3, 4.3): one turn of the agent loop on a thread. */
import { Schema } from "effect"
import { Band } from "./Band.ts"
import { AgentId, FollowupId, RunId, ThreadId } from "./Ids.ts"
import { MediaUsage } from "./Media.ts"
import { Metadata } from "./Metadata.ts"

const opt = Schema.optionalKey

export const RunStatuses = [
  "queued",
  "preparing",
  "running",
  "waiting_for_approval",
  "waiting_for_input",
  "completed",
  "failed",
  "cancelled"
] as const
export const RunStatus = Schema.Literals(RunStatuses)
export type RunStatus = typeof RunStatus.Type

export const TerminalStatuses: ReadonlyArray<RunStatus> = ["completed", "failed", "cancelled"]
export const isTerminal = (status: RunStatus): boolean => TerminalStatuses.includes(status)
export const ActiveStatuses: ReadonlyArray<RunStatus> = RunStatuses.filter((s) => !TerminalStatuses.includes(s))
export const ParkedStatuses: ReadonlyArray<RunStatus> = ["waiting_for_approval", "waiting_for_input"]

export const RunLimits = { maxSteps: 500, maxDurationMs: 30 * 24 * 60 * 60 * 1000, maxBudgetCents: 1_000_000 } as const

const usageFields = {
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  totalTokens: Schema.Number,
  costCents: Schema.Number,
  steps: Schema.Number
}

/**
 * One worker of a run tree in its root's usage (spec 7): what it metered; a worker ended by an
 * engine fault is credited (`costCents` 0, `credited: true`).
 */
export const SubagentRunUsage = Schema.Struct({
  type: Schema.Literal("subagent_run"),
  workerRef: Schema.String,
  label: Schema.String,
  role: Schema.String,
  status: Schema.String,
  terminalReason: Schema.NullOr(Schema.String),
  credited: Schema.Boolean,
  ...usageFields
}).annotate({ identifier: "SubagentRunUsage" })
export type SubagentRunUsage = typeof SubagentRunUsage.Type

/**
 * Token and cost totals (spec: "not shown"): tokens exclude reasoning; cost in US cents. A root
 * run that delegated tasks totals its whole tree and lists each worker in `subagentRuns`.
 */
export const UsageTotal = Schema.Struct({
  ...usageFields,
  subagentRuns: opt(Schema.Array(SubagentRunUsage)),
  /** Each media generation of the run (capabilities.media), its cost part of `costCents`. */
  mediaGenerations: opt(Schema.Array(MediaUsage))
}).annotate({ identifier: "UsageTotal" })
export type UsageTotal = typeof UsageTotal.Type

export const ZeroUsage: UsageTotal = { inputTokens: 0, outputTokens: 0, totalTokens: 0, costCents: 0, steps: 0 }

/** Why a run failed (spec: "not shown"): type/code as in the error envelope, plus reference for incidents. */
export const RunError = Schema.Struct({
  type: Schema.String,
  code: Schema.String,
  message: Schema.String,
  reference: opt(Schema.String)
}).annotate({ identifier: "RunError" })
export type RunError = typeof RunError.Type

export const RunConfig = Schema.Struct({
  band: Band,
  mediaFidelity: Schema.Literals(["standard", "spatial"]),
  dataHandling: Schema.Literals(["standard", "strict"]),
  timeZone: Schema.String
})
export type RunConfig = typeof RunConfig.Type

export const QueuedFollowup = Schema.Struct({ id: FollowupId, text: Schema.String, queuedAt: Schema.String })
export type QueuedFollowup = typeof QueuedFollowup.Type

export const Run = Schema.Struct({
  id: RunId,
  object: Schema.Literal("run"),
  threadId: ThreadId,
  agentId: AgentId,
  status: RunStatus,
  terminalReason: Schema.NullOr(Schema.String),
  usage: opt(UsageTotal),
  error: opt(RunError),
  queuedFollowups: opt(Schema.Array(QueuedFollowup)),
  config: RunConfig,
  metadata: Metadata,
  createdAt: Schema.String,
  startedAt: Schema.NullOr(Schema.String),
  completedAt: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Run" })
export type Run = typeof Run.Type

export const RunReceipt = Schema.Struct({
  runId: RunId,
  threadId: ThreadId,
  agentId: AgentId,
  organizationId: Schema.String,
  status: RunStatus,
  idempotencyKey: opt(Schema.String),
  createdAt: Schema.String
}).annotate({ identifier: "RunReceipt" })
export type RunReceipt = typeof RunReceipt.Type

const Attachment = Schema.Struct({ fileId: Schema.String })

export const AgentInput = Schema.Union([
  Schema.String,
  Schema.Struct({ text: opt(Schema.String), attachments: opt(Schema.Array(Attachment)) })
]).annotate({ identifier: "AgentInput" })
export type AgentInput = typeof AgentInput.Type

const PositiveInt = (max: number, what: string) =>
  Schema.Number.check(
    Schema.isInt({ message: `${what} must be an integer` }),
    Schema.isBetween({ minimum: 1, maximum: max }, { message: `${what} must be between 1 and ${max}` })
  )

/** The run options shared by `POST /v1/runs` and `POST /v1/threads/:id/messages`. */
export const runOptionFields = {
  input: AgentInput,
  band: opt(Band),
  streamProgress: opt(Schema.Boolean),
  streamReasoning: opt(Schema.Boolean),
  dataHandling: opt(Schema.Literals(["standard", "strict"])),
  timeZone: opt(Schema.String),
  outputSchema: opt(Schema.Record(Schema.String, Schema.Unknown)),
  budgetCents: opt(
    Schema.Number.check(
      Schema.isBetween({ minimum: 0, maximum: RunLimits.maxBudgetCents }, {
        message: `budgetCents must be between 0 and ${RunLimits.maxBudgetCents}`
      })
    )
  ),
  maxSteps: opt(PositiveInt(RunLimits.maxSteps, "maxSteps")),
  maxDurationMs: opt(PositiveInt(RunLimits.maxDurationMs, "maxDurationMs")),
  metadata: opt(Metadata),
  idempotencyKey: opt(Schema.String)
}

export const MessageInput = Schema.Struct(runOptionFields).annotate({ identifier: "MessageInput" })
export type MessageInput = typeof MessageInput.Type

export const RunStartInput = Schema.Struct({ threadId: ThreadId, ...runOptionFields }).annotate({
  identifier: "RunStartInput"
})
export type RunStartInput = typeof RunStartInput.Type

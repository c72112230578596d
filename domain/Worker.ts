/**
 * Subagents (spec 1.2, 2.1.1 `subagents`, 2.4, 6.2): the input of the
 * built-in `delegate_task` tool, what makes a run a worker (stored in its
 * plan), and the data parts that announce a task on the root stream and open
 * a worker's sub-stream.
 */
import { Schema } from "effect"
import { RunId, ToolCallId, WorkerId } from "./Ids.ts"

const opt = Schema.optionalKey

/** `worker` acts with the root's tools; `advisor` only answers (no tools at all). */
export const WorkerRole = Schema.Literals(["worker", "advisor"])
export type WorkerRole = typeof WorkerRole.Type

/** The name of the built-in tool: public contract (approval policies and hooks name it). */
export const DelegateTaskName = "delegate_task"

export const DelegateTaskInput = Schema.Struct({
  label: Schema.String.check(
    Schema.isNonEmpty({ message: "label must not be empty" }),
    Schema.isMaxLength(200, { message: "label must be at most 200 characters" })
  ).annotate({ description: "A short title for the task." }),
  prompt: Schema.String.check(
    Schema.isNonEmpty({ message: "prompt must not be empty" }),
    Schema.isMaxLength(100_000, { message: "prompt must be at most 100,000 characters" })
  ).annotate({ description: "The full instructions for the worker." }),
  role: opt(WorkerRole),
  /** A JSON Schema the task's final answer must satisfy: the result then carries it as `output`. */
  outputSchema: opt(Schema.Record(Schema.String, Schema.Unknown))
})
export type DelegateTaskInput = typeof DelegateTaskInput.Type

/** A worker run's place in its tree, frozen in its plan. */
export const WorkerPlan = Schema.Struct({
  rootRunId: RunId,
  workerRef: WorkerId,
  role: WorkerRole,
  label: Schema.String,
  /** The root's maxDurationMs deadline (epoch ms), which bounds every member of the tree; null without one. */
  deadlineMs: Schema.NullOr(Schema.Number),
  /** The run that delegated the task when it is another worker (nested delegation); absent: the root. */
  parentRunId: Schema.optionalKey(RunId),
  /** Levels below the root: 1 for the root's own workers (absent: 1), 2 for the workers they delegate to. */
  depth: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)))
})
export type WorkerPlan = typeof WorkerPlan.Type

/** A delegated call of a parked root step and the worker that runs it. */
export const PendingWorker = Schema.Struct({ toolCallId: ToolCallId, workerRef: WorkerId })
export type PendingWorker = typeof PendingWorker.Type

/** `data-svc-task` on the root stream, one per delegated task. */
export const TaskData = Schema.Struct({ label: Schema.String, workerRef: WorkerId, role: WorkerRole })

/** `data-svc-worker-meta`: the first data part of a worker's sub-stream. */
export const WorkerMetaData = Schema.Struct({
  role: WorkerRole,
  label: Schema.String,
  status: Schema.String,
  prompt: Schema.String
})

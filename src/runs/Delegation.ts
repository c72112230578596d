/**
 * Delegated tasks (subagents) as the loop sees them. A root step's
 * `delegate_task` calls become worker runs: each a row of its own under the
 * root (ids derived from the call, so a replayed step finds its workers
 * again), announced on the root stream with `data-svc-task` and started on
 * their entity (WorkerStarts, implemented by the actors). The root then waits
 * on them durably (its park lists them). When they have ended, their answers
 * become the calls' results. A worker inherits the root's snapshot (context,
 * tools, approvals, data handling, caps) and works in the thread's managed
 * workspace with it (the same files, network and secrets: WorkerStarts places
 * such a worker on its root's runner, where the workspace is); the root's
 * budget and deadline bound the whole tree. A worker above the deepest level
 * SVC_MAX_DELEGATION_DEPTH allows delegates too: its workers belong to the
 * same tree (one root, one budget, one deadline) and wake it, not the root,
 * when they end.
 */
import { Context, Effect, Layer, Result } from "effect"
import type { ToolCall } from "../../domain/Conversation.ts"
import type { RunId, WorkerId } from "../../domain/Ids.ts"
import { isTerminal, type SubagentRunUsage, type UsageTotal, ZeroUsage } from "../../domain/Run.ts"
import type { RunPlan } from "../../domain/RunPlan.ts"
import type { DelegateTaskInput, PendingWorker, WorkerPlan } from "../../domain/Worker.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import type { RunRow } from "../store/RunRepo.ts"
import { WorkerRepo, type WorkerState } from "../store/WorkerRepo.ts"
import { nowIso } from "../Time.ts"
import { delegateTask } from "../tools/DelegateTask.ts"
import * as ToolDef from "../tools/ToolDef.ts"
import * as ToolOutcome from "../tools/ToolOutcome.ts"
import type { Writer } from "./EventLog.ts"
import { settle, type Settled } from "./Outcome.ts"
import * as StructuredOutput from "./StructuredOutput.ts"

/** Starts a worker run on its entity (the actors implement it: src never addresses an entity). */
export class WorkerStarts extends Context.Service<WorkerStarts, {
  readonly start: (workerRef: WorkerId, runId: RunId) => Effect.Effect<void>
  /**
   * The reference of a worker that runs where the tree's root runs (the runner holding the thread's
   * workspace): the first of `candidate(0)`, `candidate(1)`, ... whose entity lives there. Deterministic,
   * so a replayed step finds the same worker again.
   */
  readonly besideRoot: (rootRunId: RunId, candidate: (attempt: number) => WorkerId) => Effect.Effect<WorkerId>
}>()("svc/WorkerStarts") {}

/** What delegating a step's calls gave: the workers to wait on, and the calls refused (bad input). */
export interface Spawned {
  readonly workers: ReadonlyArray<PendingWorker>
  readonly refused: ReadonlyArray<Settled>
}

/**
 * A worker's plan: its delegator's snapshot with the task as input, and its place in the tree. It
 * works in the same managed or remote workspace (an advisor in none); it may delegate in turn while
 * its depth is below `maxDepth` (SVC_MAX_DELEGATION_DEPTH): at that depth it is not offered
 * delegate_task at all.
 */
export const workerPlan = (from: RunPlan, task: DelegateTaskInput, worker: WorkerPlan, maxDepth: number): RunPlan => {
  const {
    subagents,
    workspace,
    remoteWorkspace,
    web,
    browser,
    mediaView,
    media,
    codehost,
    threadContext: _threadContext,
    worker: _worker,
    ...inherited
  } = from
  const advisor = worker.role === "advisor"
  // The capabilities that bring tools: a worker has its root's, an advisor none.
  const tooled = advisor ? {} : {
    ...(web === undefined ? {} : { web }),
    ...(browser === undefined ? {} : { browser }),
    ...(mediaView === undefined ? {} : { mediaView }),
    ...(media === undefined ? {} : { media }),
    ...(codehost === undefined ? {} : { codehost })
  }
  return {
    ...inherited,
    ...tooled,
    input: task.prompt,
    outputSchema: task.outputSchema ?? null,
    // An advisor only answers: no tools (no workspace either), no skills to load, no questions.
    toolServers: advisor ? [] : from.toolServers,
    httpConnections: advisor ? [] : from.httpConnections,
    skills: advisor ? [] : from.skills,
    userInteraction: advisor ? false : from.userInteraction,
    ...(advisor || workspace === undefined ? {} : { workspace }),
    // A remote workspace (issue 31) too: a worker sends its calls to the same environment's runners.
    ...(advisor || remoteWorkspace === undefined ? {} : { remoteWorkspace }),
    ...(!advisor && subagents === true && (worker.depth ?? 1) < maxDepth ? { subagents: true } : {}),
    worker
  }
}

/** The tree's usage as its root reports it: the root's own plus each worker's, listed (spec 2.3, 7). */
export const treeTotal = (own: UsageTotal, workers: ReadonlyArray<RunRow>): UsageTotal => {
  if (workers.length === 0) return own
  const rows = workers.map((w): SubagentRunUsage => {
    const usage = w.run.usage ?? ZeroUsage
    return {
      type: "subagent_run",
      workerRef: w.plan?.worker?.workerRef ?? "",
      label: w.plan?.worker?.label ?? "",
      role: w.plan?.worker?.role ?? "worker",
      status: w.run.status,
      terminalReason: w.run.terminalReason,
      credited: w.run.terminalReason === "engine_fault",
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      totalTokens: usage.totalTokens,
      costCents: usage.costCents,
      steps: usage.steps
    }
  })
  const sum = (key: "inputTokens" | "outputTokens" | "totalTokens" | "costCents" | "steps") =>
    own[key] + rows.reduce((total, r) => total + r[key], 0)
  return {
    inputTokens: sum("inputTokens"),
    outputTokens: sum("outputTokens"),
    totalTokens: sum("totalTokens"),
    costCents: sum("costCents"),
    steps: sum("steps"),
    subagentRuns: rows,
    // The root's own media lines (a worker's are in its own receipt; its cost is in its row).
    ...(own.mediaGenerations === undefined ? {} : { mediaGenerations: own.mediaGenerations })
  }
}

/** A worker that ended, as its delegate_task call's result: its final answer, or a tool error saying why there is none. */
const resultOf = ({ row, answer }: WorkerState): Effect.Effect<ToolOutcome.ToolOutcome> => {
  const label = row.plan?.worker?.label ?? ""
  const workerRef = row.plan?.worker?.workerRef ?? ""
  const { status, terminalReason } = row.run
  if (status === "completed" && terminalReason === null) {
    const text = answer ?? ""
    const schema = row.plan?.outputSchema ?? null
    return Effect.map(
      schema === null ? Effect.succeed(undefined) : StructuredOutput.extract(text, schema),
      (extracted) =>
        ToolOutcome.success(
          { workerRef, answer: text, ...(extracted?._tag === "Value" ? { output: extracted.value } : {}) },
          text
        )
    )
  }
  const why = status === "failed"
    ? `it failed: ${row.run.error?.message ?? "unknown error"}`
    : status === "cancelled"
    ? terminalReason === null ? "it was cancelled." : `it was cancelled (${terminalReason}).`
    : `it stopped (${terminalReason}).`
  return Effect.succeed(
    ToolOutcome.failure("worker_ended", `The task '${label}' (${workerRef}) ended without an answer: ${why}`)
  )
}

export class Delegation extends Context.Service<Delegation, {
  /** Creates, announces and starts the worker of each call of `from`, the root or a worker (bounded by the root's deadline, epoch ms). */
  readonly spawn: (
    from: RunRow,
    calls: ReadonlyArray<ToolCall>,
    writer: Writer,
    deadlineMs: number | null
  ) => Effect.Effect<Spawned>
  /** Whether a worker the run's park waits on is still going. */
  readonly waiting: (row: RunRow) => Effect.Effect<boolean>
  /** The results of the park's workers (all ended), as their calls settle. */
  readonly results: (row: RunRow) => Effect.Effect<ReadonlyArray<Settled>>
  /**
   * What the rest of the run's tree has metered, for the cost caps checked before each step
   * (`capped`: some apply): a worker reads it each time; a root reads it once per execution (its
   * workers only run while it waits); a run alone in its tree has nothing beside it.
   */
  readonly othersCost: (row: RunRow, capped: boolean) => Effect.Effect<Effect.Effect<number>>
  /** The usage a run reports: a root that delegated totals its tree (every level). */
  readonly reported: (row: RunRow, own: UsageTotal) => Effect.Effect<UsageTotal>
}>()("svc/Delegation") {
  static readonly layer = Layer.effect(Delegation)(
    Effect.gen(function*() {
      const repo = yield* WorkerRepo
      const ids = yield* IdGenerator
      const starts = yield* WorkerStarts
      const { maxDelegationDepth } = yield* ServiceConfig

      // `from` is the run that delegates: the tree's root, or a worker of it (nested delegation).
      const spawn = Effect.fn("Delegation.spawn")(
        function*(from: RunRow, calls: ReadonlyArray<ToolCall>, writer: Writer, deadlineMs: number | null) {
          const plan = from.plan
          if (plan === undefined) {
            return {
              workers: [],
              refused: calls.map((c) =>
                settle(c, ToolOutcome.failure("delegation_unavailable", "this run cannot delegate."))
              )
            }
          }
          const rootRunId = plan.worker?.rootRunId ?? from.id
          const depth = plan.worker === undefined ? 1 : (plan.worker.depth ?? 1) + 1
          const refused: Array<Settled> = []
          const created: Array<PendingWorker & { readonly runId: RunId; readonly task: DelegateTaskInput }> = []
          for (const call of calls) {
            const read = ToolDef.decode(delegateTask, call.input)
            if (Result.isFailure(read)) {
              refused.push(settle(call, read.failure))
              continue
            }
            const task = read.success
            const schemaProblem = task.outputSchema === undefined
              ? undefined
              : yield* StructuredOutput.schemaProblem(task.outputSchema)
            if (schemaProblem !== undefined) {
              refused.push(settle(
                call,
                ToolOutcome.failure("invalid_tool_input", `Invalid input for delegate_task: ${schemaProblem}.`)
              ))
              continue
            }
            // A worker that opens the workspace runs where the tree's root runs (its workspace is there).
            const seed = `${from.id}:${call.id}`
            const candidate = (attempt: number) => ids.derive("worker", attempt === 0 ? seed : `${seed}:${attempt}`)
            const workerRef = plan.workspace !== undefined && task.role !== "advisor"
              ? yield* starts.besideRoot(rootRunId, candidate)
              : candidate(0)
            created.push({
              toolCallId: call.id,
              workerRef,
              runId: ids.derive("run", `worker:${workerRef}`),
              task
            })
          }
          const now = yield* nowIso
          yield* Effect.forEach(created, ({ workerRef, runId, task }) =>
            repo.insert({
              id: runId,
              workerRef,
              rootRunId,
              organizationId: from.organizationId,
              workspaceId: from.workspaceId,
              plan: workerPlan(plan, task, {
                rootRunId,
                workerRef,
                role: task.role ?? "worker",
                label: task.label,
                deadlineMs,
                ...(plan.worker === undefined ? {} : { parentRunId: from.id, depth })
              }, maxDelegationDepth),
              run: {
                ...from.run,
                id: runId,
                status: "queued",
                terminalReason: null,
                usage: ZeroUsage,
                metadata: {},
                createdAt: now,
                startedAt: null,
                completedAt: null
              }
            }), { concurrency: "unbounded", discard: true })
          for (const { workerRef, task } of created) {
            yield* writer.emit({
              type: "data-svc-task",
              data: { label: task.label, workerRef, role: task.role ?? "worker" }
            })
          }
          yield* Effect.forEach(created, ({ workerRef, runId }) => starts.start(workerRef, runId), {
            concurrency: "unbounded",
            discard: true
          })
          return {
            workers: created.map(({ toolCallId, workerRef }) => ({ toolCallId, workerRef })),
            refused
          } satisfies Spawned
        }
      )

      // Every worker of a tree is stored under its root, whichever member delegated to it.
      const statesOf = (row: RunRow) =>
        repo.states(row.plan?.worker?.rootRunId ?? row.id, (row.park?.workers ?? []).map((w) => w.workerRef))

      return {
        spawn,
        waiting: Effect.fn("Delegation.waiting")(function*(row: RunRow) {
          const pending = row.park?.workers ?? []
          if (pending.length === 0) return false
          const states = yield* statesOf(row)
          return pending.some((w) =>
            !states.some((s) => s.row.plan?.worker?.workerRef === w.workerRef && isTerminal(s.row.run.status))
          )
        }),
        results: Effect.fn("Delegation.results")(function*(row: RunRow) {
          const pending = row.park?.workers ?? []
          if (pending.length === 0) return []
          const calls = row.park?.assistant.toolCalls ?? []
          const states = yield* statesOf(row)
          const settled = yield* Effect.forEach(pending, (w) => {
            const call = calls.find((c) => c.id === w.toolCallId)
            const state = states.find((s) => s.row.plan?.worker?.workerRef === w.workerRef)
            if (call === undefined) return Effect.succeed([])
            return Effect.map(
              state === undefined
                ? Effect.succeed(ToolOutcome.failure("worker_gone", `The task's worker ${w.workerRef} is gone.`))
                : resultOf(state),
              (outcome) => [settle(call, outcome)]
            )
          })
          return settled.flat()
        }),
        othersCost: (row: RunRow, capped: boolean) => {
          const worker = row.plan?.worker
          if (!capped) return Effect.succeed(Effect.succeed(0))
          if (worker !== undefined) return Effect.succeed(repo.treeCostExcept(worker.rootRunId, row.id))
          if (row.plan?.subagents !== true) return Effect.succeed(Effect.succeed(0))
          return Effect.cached(repo.treeCostExcept(row.id, row.id))
        },
        reported: Effect.fn("Delegation.reported")(function*(row: RunRow, own: UsageTotal) {
          // The root totals its whole tree (nested workers included); a worker reports its own.
          if (row.plan?.subagents !== true || row.plan.worker !== undefined) return own
          return treeTotal(own, yield* repo.ofRoots([row.id]))
        })
      }
    })
  )
}

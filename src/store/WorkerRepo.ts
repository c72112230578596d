/**
 * Worker runs (subagents): rows of `runs` scoped under their root by
 * `root_run_id`, addressed by `worker_ref`. Creating one (idempotent: its ids
 * derive from the delegating call), reading the workers of a tree (their
 * answers, their usage, what is still going), the tree's cost, and the root's
 * status while a member waits on a person.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { Message } from "../../domain/Conversation.ts"
import { RunId, type WorkerId } from "../../domain/Ids.ts"
import type { Run } from "../../domain/Run.ts"
import type { RunPlan } from "../../domain/RunPlan.ts"
import { type RunRow, toRunRows } from "./RunRepo.ts"

/** A worker run as its root creates it. */
export interface NewWorker {
  readonly id: RunId
  readonly workerRef: WorkerId
  readonly rootRunId: RunId
  readonly organizationId: string
  readonly workspaceId: string
  readonly plan: RunPlan
  readonly run: Run
}

/** A worker of a tree with the text of its last answer (its final answer once it completed). */
export interface WorkerState {
  readonly row: RunRow
  readonly answer: string | undefined
}

const LastSteps = Schema.Array(Schema.Struct({ last_step: Schema.NullOr(Schema.Array(Message)) }))
const decodeLastSteps = Schema.decodeUnknownEffect(LastSteps)
const Cost = Schema.Array(
  Schema.Struct({ cost: Schema.NullOr(Schema.Union([Schema.Number, Schema.NumberFromString])) })
)
const decodeCost = Schema.decodeUnknownEffect(Cost)

const lastAnswer = (messages: ReadonlyArray<Message> | null): string | undefined => {
  const assistant = [...(messages ?? [])].reverse().find((m) => m.role === "assistant")
  return assistant?.role === "assistant" ? assistant.content : undefined
}

const terminal = ["completed", "failed", "cancelled"] as const

export class WorkerRepo extends Context.Service<WorkerRepo, {
  /** Creates the worker run (queued); nothing when it exists already (a replayed step delegates again). */
  readonly insert: (worker: NewWorker) => Effect.Effect<void>
  readonly find: (rootRunId: RunId, workerRef: WorkerId) => Effect.Effect<Option.Option<RunRow>>
  /** The named workers of a root with their last answers. */
  readonly states: (rootRunId: RunId, workerRefs: ReadonlyArray<WorkerId>) => Effect.Effect<ReadonlyArray<WorkerState>>
  /** Every worker of each root, oldest first (those created together by reference). */
  readonly ofRoots: (rootRunIds: ReadonlyArray<RunId>) => Effect.Effect<ReadonlyArray<RunRow>>
  /** The workers of a root that have not ended. */
  readonly active: (rootRunId: RunId) => Effect.Effect<ReadonlyArray<RunRow>>
  /** The metered cost of the root and all its workers, but `except` (as of each one's last completed step). */
  readonly treeCostExcept: (rootRunId: RunId, except: RunId) => Effect.Effect<number>
  /**
   * A root waiting on its workers shows what its tree waits on: `waiting_for_approval` while a
   * member waits on an approval, `waiting_for_input` on a question, else `running`.
   */
  readonly refreshTreeStatus: (rootRunId: RunId, now: string) => Effect.Effect<void>
}>()("svc/WorkerRepo") {
  static readonly layer = Layer.effect(WorkerRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const rows = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        Effect.flatMap(Effect.orDie(query), toRunRows)
      return {
        insert: Effect.fn("WorkerRepo.insert")(function*(w: NewWorker) {
          const r = w.run
          yield* sql`INSERT INTO runs (id, organization_id, workspace_id, thread_id, agent_id, status, terminal_reason, error,
              usage, config, plan, metadata, idempotency_key, created_at, started_at, completed_at, updated_at, root_run_id, worker_ref)
            VALUES (${r.id}, ${w.organizationId}, ${w.workspaceId}, ${r.threadId}, ${r.agentId}, ${r.status}, NULL, NULL,
              ${sql.json(r.usage)}, ${sql.json(r.config)}, ${sql.json(w.plan)}, ${sql.json(r.metadata)},
              NULL, ${r.createdAt}, NULL, NULL, ${r.createdAt}, ${w.rootRunId}, ${w.workerRef})
            ON CONFLICT (id) DO NOTHING`.pipe(Effect.orDie)
        }),
        find: Effect.fn("WorkerRepo.find")(function*(rootRunId: RunId, workerRef: WorkerId) {
          const found = yield* rows(
            sql`SELECT * FROM runs WHERE worker_ref = ${workerRef} AND root_run_id = ${rootRunId}`
          )
          return Option.fromNullishOr(found[0])
        }),
        states: Effect.fn("WorkerRepo.states")(function*(rootRunId: RunId, workerRefs: ReadonlyArray<WorkerId>) {
          if (workerRefs.length === 0) return []
          const raw =
            yield* sql`SELECT r.*, (SELECT s.messages FROM run_steps s WHERE s.run_id = r.id ORDER BY s.step DESC LIMIT 1) AS last_step
            FROM runs r WHERE r.root_run_id = ${rootRunId} AND r.worker_ref IN ${sql.in(workerRefs)}`.pipe(Effect.orDie)
          const decoded = yield* toRunRows(raw)
          const steps = yield* decodeLastSteps(raw).pipe(Effect.orDie)
          return decoded.map((row, i): WorkerState => ({ row, answer: lastAnswer(steps[i]?.last_step ?? null) }))
        }),
        ofRoots: Effect.fn("WorkerRepo.ofRoots")(function*(rootRunIds: ReadonlyArray<RunId>) {
          if (rootRunIds.length === 0) return []
          return yield* rows(
            sql`SELECT * FROM runs WHERE root_run_id IN ${sql.in(rootRunIds)} ORDER BY created_at, worker_ref`
          )
        }),
        active: Effect.fn("WorkerRepo.active")(function*(rootRunId: RunId) {
          return yield* rows(
            sql`SELECT * FROM runs WHERE root_run_id = ${rootRunId} AND status NOT IN ${sql.in(terminal)}`
          )
        }),
        treeCostExcept: Effect.fn("WorkerRepo.treeCostExcept")(function*(rootRunId: RunId, except: RunId) {
          const cost = yield* sql`SELECT sum((usage->>'costCents')::float8) AS cost FROM runs
            WHERE (id = ${rootRunId} OR root_run_id = ${rootRunId}) AND id <> ${except}`.pipe(
            Effect.flatMap(decodeCost),
            Effect.orDie
          )
          return Number(cost[0]?.cost ?? 0)
        }),
        refreshTreeStatus: Effect.fn("WorkerRepo.refreshTreeStatus")(function*(rootRunId: RunId, now: string) {
          yield* sql`UPDATE runs r SET status = CASE
                WHEN EXISTS (SELECT 1 FROM interactions i WHERE i.root_run_id = r.id AND i.status = 'pending' AND i.kind = 'approval_request')
                  THEN 'waiting_for_approval'
                WHEN EXISTS (SELECT 1 FROM interactions i WHERE i.root_run_id = r.id AND i.status = 'pending') THEN 'waiting_for_input'
                ELSE 'running' END,
              updated_at = ${now}
            WHERE r.id = ${rootRunId} AND r.park IS NOT NULL
              AND r.status IN ('running', 'waiting_for_approval', 'waiting_for_input')`.pipe(Effect.orDie)
        })
      }
    })
  )
}

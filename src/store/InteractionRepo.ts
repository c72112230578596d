/** Persistence of interactions. */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Statement } from "effect/sql"
import { AgentId, HookId, InteractionId, RunId, ThreadId, ToolCallId, WorkerId } from "../../domain/Ids.ts"
import {
  type Interaction,
  InteractionKind,
  type InteractionKind as Kind,
  InteractionStatus,
  type InteractionStatus as Status,
  QuestionRequest
} from "../../domain/Interaction.ts"
import type { Position } from "./Cursor.ts"
import { nulFree, nulFreeText } from "./NulFree.ts"

export interface InteractionRow extends Position {
  readonly id: InteractionId
  readonly interaction: Interaction
  readonly organizationId: string
  readonly workspaceId: string
  /** The park deadline, kept after resolution (expiresAt shows it only while pending). */
  readonly deadline: string | null
  /** Cancelled by the run's end rather than by a client: a late answer still records (spec 3.2). */
  readonly closedByRun: boolean
}

const Row = Schema.Struct({
  id: InteractionId,
  organization_id: Schema.String,
  workspace_id: Schema.String,
  run_id: RunId,
  root_run_id: RunId,
  worker_ref: Schema.NullOr(WorkerId),
  thread_id: ThreadId,
  agent_id: AgentId,
  kind: InteractionKind,
  status: InteractionStatus,
  step_number: Schema.Number,
  tool_name: Schema.String,
  tool_call_id: ToolCallId,
  hook_id: Schema.NullOr(HookId),
  input: Schema.Unknown,
  preview: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  decision: Schema.NullOr(Schema.Literals(["allow", "deny", "cancel"])),
  reason: Schema.NullOr(Schema.String),
  request: Schema.NullOr(QuestionRequest),
  resolution: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  expires_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  resolved_at: Schema.NullOr(Schema.String),
  updated_at: Schema.String,
  closed_by_run: Schema.Boolean
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))

const toRow = (r: typeof Row.Type): InteractionRow => ({
  id: r.id,
  createdAt: r.created_at,
  organizationId: r.organization_id,
  workspaceId: r.workspace_id,
  deadline: r.expires_at,
  closedByRun: r.closed_by_run,
  interaction: {
    id: r.id,
    object: "interaction",
    runId: r.run_id,
    rootRunId: r.root_run_id,
    workerRef: r.worker_ref,
    threadId: r.thread_id,
    agentId: r.agent_id,
    kind: r.kind,
    status: r.status,
    stepNumber: r.step_number,
    toolName: r.tool_name,
    toolCallId: r.tool_call_id,
    hookId: r.hook_id,
    // Approval only (spec 2.4): rows stored before questions left it out may still hold one.
    ...(r.kind === "approval_request" ? { input: r.input } : {}),
    ...(r.preview === null ? {} : { preview: r.preview }),
    decision: r.decision,
    reason: r.reason,
    request: r.request,
    resolution: r.resolution,
    expiresAt: r.status === "pending" ? r.expires_at : null,
    createdAt: r.created_at,
    resolvedAt: r.resolved_at,
    updatedAt: r.updated_at
  }
})

export interface InteractionFilter {
  /** The run that issued the call (a worker's own id for a worker call). */
  readonly runId?: RunId | undefined
  /** Every interaction of a run tree: the root's and its workers'. */
  readonly rootRunId?: RunId | undefined
  readonly status?: Status | undefined
  readonly kind?: Kind | undefined
}

export interface Settlement {
  readonly status: "resolved" | "cancelled"
  readonly decision: "allow" | "deny" | "cancel" | null
  readonly reason: string | null
  readonly resolution: Record<string, unknown> | null
}

export class InteractionRepo extends Context.Service<InteractionRepo, {
  readonly insert: (row: Omit<InteractionRow, "closedByRun">) => Effect.Effect<void>
  readonly find: (id: InteractionId) => Effect.Effect<Option.Option<InteractionRow>>
  readonly list: (
    scope: { readonly organizationId: string; readonly workspaceId: string },
    filter: InteractionFilter,
    limit: number,
    after: Position | undefined
  ) => Effect.Effect<ReadonlyArray<InteractionRow>>
  readonly ofRun: (runId: RunId) => Effect.Effect<ReadonlyArray<InteractionRow>>
  /** The interactions of a run tree (the root's and its workers'). */
  readonly ofTree: (rootRunId: RunId) => Effect.Effect<ReadonlyArray<InteractionRow>>
  /**
   * Settles a pending interaction, or records a late answer on one the run's
   * end cancelled; false when a client had settled it already.
   */
  readonly settle: (id: InteractionId, settlement: Settlement, now: string) => Effect.Effect<boolean>
  /** Cancels every pending interaction of the run (run cancelled or timed out). */
  readonly cancelPending: (runId: RunId, now: string) => Effect.Effect<void>
  /** The same, as a statement to run within another write. */
  readonly cancelPendingStatement: (runId: RunId, now: string) => Statement.Fragment
}>()("svc/InteractionRepo") {
  static readonly layer = Layer.effect(InteractionRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const select = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeRows), Effect.map((rows) => rows.map(toRow)), Effect.orDie)
      // Inputs the model wrote, hook reasons, tool call ids of providers: stored without NULs (NulFree.ts).
      const json = (v: unknown) => (v === null || v === undefined ? null : sql.json(nulFree(v)))
      const cancelPending = (runId: RunId, now: string) =>
        sql`UPDATE interactions SET status = 'cancelled',
            decision = CASE WHEN kind = 'approval_request' THEN 'cancel' ELSE NULL END,
            resolved_at = ${now}, updated_at = ${now}, closed_by_run = true
          WHERE run_id = ${runId} AND status = 'pending'`
      return {
        insert: Effect.fn("InteractionRepo.insert")(function*(row: Omit<InteractionRow, "closedByRun">) {
          const i = row.interaction
          yield* sql`INSERT INTO interactions (id, organization_id, workspace_id, run_id, root_run_id, worker_ref, thread_id,
              agent_id, kind, status, step_number, tool_name, tool_call_id, hook_id, input, preview, decision, reason, request,
              resolution, expires_at, created_at, resolved_at, updated_at)
            VALUES (${i.id}, ${row.organizationId}, ${row.workspaceId}, ${i.runId}, ${i.rootRunId}, ${i.workerRef}, ${i.threadId},
              ${i.agentId}, ${i.kind}, ${i.status}, ${i.stepNumber}, ${i.toolName}, ${
            nulFreeText(i.toolCallId)
          }, ${i.hookId}, ${json(i.input)},
              ${json(i.preview)}, ${i.decision}, ${nulFreeText(i.reason)}, ${json(i.request)}, ${
            json(i.resolution)
          }, ${row.deadline},
              ${i.createdAt}, ${i.resolvedAt}, ${i.updatedAt})`.pipe(Effect.orDie)
        }),
        find: Effect.fn("InteractionRepo.find")(function*(id: InteractionId) {
          return Option.fromNullishOr((yield* select(sql`SELECT * FROM interactions WHERE id = ${id}`))[0])
        }),
        list: Effect.fn("InteractionRepo.list")(function*(scope, filter: InteractionFilter, limit: number, after) {
          const conditions = [
            sql`organization_id = ${scope.organizationId}`,
            sql`workspace_id = ${scope.workspaceId}`,
            ...(filter.runId === undefined ? [] : [sql`run_id = ${filter.runId}`]),
            ...(filter.rootRunId === undefined ? [] : [sql`root_run_id = ${filter.rootRunId}`]),
            ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
            ...(filter.kind === undefined ? [] : [sql`kind = ${filter.kind}`]),
            ...(after === undefined ? [] : [sql`(created_at, id) < (${after.createdAt}, ${after.id})`])
          ]
          return yield* select(
            sql`SELECT * FROM interactions WHERE ${sql.and(conditions)} ORDER BY created_at DESC, id DESC LIMIT ${
              limit + 1
            }`
          )
        }),
        ofRun: Effect.fn("InteractionRepo.ofRun")(function*(runId: RunId) {
          return yield* select(sql`SELECT * FROM interactions WHERE run_id = ${runId} ORDER BY created_at, id`)
        }),
        ofTree: Effect.fn("InteractionRepo.ofTree")(function*(rootRunId: RunId) {
          return yield* select(sql`SELECT * FROM interactions WHERE root_run_id = ${rootRunId} ORDER BY created_at, id`)
        }),
        settle: Effect.fn("InteractionRepo.settle")(function*(id: InteractionId, s: Settlement, now: string) {
          const rows = yield* sql`UPDATE interactions SET status = ${s.status}, decision = ${s.decision}, reason = ${
            nulFreeText(s.reason)
          },
              resolution = ${json(s.resolution)}, resolved_at = ${now}, updated_at = ${now}, closed_by_run = false
            WHERE id = ${id} AND (status = 'pending' OR closed_by_run) RETURNING id`.pipe(Effect.orDie)
          return rows.length > 0
        }),
        cancelPending: Effect.fn("InteractionRepo.cancelPending")(function*(runId: RunId, now: string) {
          yield* cancelPending(runId, now).pipe(Effect.orDie)
        }),
        cancelPendingStatement: cancelPending
      }
    })
  )
}

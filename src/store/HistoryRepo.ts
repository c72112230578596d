/**
 * What a thread's history is read from (src/threads/History.ts): its root
 * runs in order with the user's input, and for a page of them their stored
 * stream chunks, the approval requests of their calls, and (once a stream is
 * gone) their checkpointed steps and the held messages they delivered.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schema } from "effect"
import { Chunk } from "../../domain/Chunk.ts"
import { AttachmentRef, Message } from "../../domain/Conversation.ts"
import { FollowupId, InteractionId, RunId, type ThreadId } from "../../domain/Ids.ts"

/** A root run of the thread: one turn, started by the user's input. */
export interface Turn {
  readonly runId: RunId
  readonly createdAt: string
  readonly input: string
  readonly attachments: ReadonlyArray<AttachmentRef>
}

/** Where a page starts: after the run at this position, or at it (`inclusive`). */
export interface TurnPosition {
  readonly createdAt: string
  readonly runId: RunId
  readonly inclusive: boolean
}

export interface TurnRecords {
  /** Each run's stored chunks, oldest first (progress snapshots left out: they are not part of any message). */
  readonly chunks: ReadonlyMap<RunId, ReadonlyArray<Chunk>>
  /** The checkpointed steps of each run without stored chunks, in order: the messages of each step. */
  readonly steps: ReadonlyMap<RunId, ReadonlyArray<ReadonlyArray<Message>>>
  /** The held messages each run without stored chunks delivered, in the order it delivered them. */
  readonly followups: ReadonlyMap<RunId, ReadonlyArray<{ readonly id: FollowupId; readonly text: string }>>
  /** The approval request of each call of the runs that had one (a hook's review or a person's), by call id. */
  readonly approvals: ReadonlyMap<string, InteractionId>
}

const TurnRows = Schema.Array(Schema.Struct({
  id: RunId,
  created_at: Schema.String,
  input: Schema.NullOr(Schema.String),
  attachments: Schema.NullOr(Schema.Array(AttachmentRef))
}))
const ChunkRows = Schema.Array(Schema.Struct({ run_id: RunId, chunk: Chunk }))
const StepRows = Schema.Array(Schema.Struct({ run_id: RunId, messages: Schema.Array(Message) }))
const FollowupRows = Schema.Array(Schema.Struct({ run_id: RunId, id: FollowupId, text: Schema.String }))
const ApprovalRows = Schema.Array(Schema.Struct({ tool_call_id: Schema.String, id: InteractionId }))

/** Rows grouped by run, in row order. */
const byRun = <R extends { readonly run_id: RunId }, A>(rows: ReadonlyArray<R>, value: (row: R) => A) => {
  const grouped = new Map<RunId, Array<A>>()
  for (const row of rows) {
    const list = grouped.get(row.run_id)
    if (list === undefined) grouped.set(row.run_id, [value(row)])
    else list.push(value(row))
  }
  return grouped
}

export class HistoryRepo extends Context.Service<HistoryRepo, {
  /** At most `limit` root runs of the thread from `from` on, oldest first. */
  readonly turns: (
    threadId: ThreadId,
    from: TurnPosition | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Turn>>
  readonly records: (runIds: ReadonlyArray<RunId>) => Effect.Effect<TurnRecords>
}>()("svc/HistoryRepo") {
  static readonly layer = Layer.effect(HistoryRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const read = <S extends Schema.Top>(schema: S, query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(Schema.decodeUnknownEffect(schema)), Effect.orDie)

      return {
        turns: Effect.fn("HistoryRepo.turns")(
          function*(threadId: ThreadId, from: TurnPosition | undefined, limit: number) {
            const after = from === undefined
              ? sql``
              : from.inclusive
              ? sql`AND (created_at, id) >= (${from.createdAt}, ${from.runId})`
              : sql`AND (created_at, id) > (${from.createdAt}, ${from.runId})`
            const rows = yield* read(
              TurnRows,
              sql`SELECT id, created_at, plan->>'input' AS input, plan->'attachments' AS attachments FROM runs
                WHERE thread_id = ${threadId} AND root_run_id IS NULL ${after}
                ORDER BY created_at, id LIMIT ${limit}`
            )
            return rows.map((r): Turn => ({
              runId: r.id,
              createdAt: r.created_at,
              input: r.input ?? "",
              attachments: r.attachments ?? []
            }))
          }
        ),
        records: Effect.fn("HistoryRepo.records")(function*(runIds: ReadonlyArray<RunId>) {
          if (runIds.length === 0) {
            return { chunks: new Map(), steps: new Map(), followups: new Map(), approvals: new Map() }
          }
          const [chunkRows, approvals] = yield* Effect.all([
            read(
              ChunkRows,
              sql`SELECT run_id, chunk FROM run_events
                WHERE ${sql.in("run_id", runIds)} AND chunk->>'type' <> 'data-svc-progress' ORDER BY run_id, seq`
            ),
            read(
              ApprovalRows,
              sql`SELECT tool_call_id, id FROM interactions
                WHERE ${sql.in("run_id", runIds)} AND kind = 'approval_request' ORDER BY created_at, id`
            )
          ], { concurrency: 2 })
          const chunks = byRun(chunkRows, (r) => r.chunk)
          const approvalOf = new Map(approvals.map((r) => [r.tool_call_id, r.id] as const))
          // Steps and delivered follow-ups only for runs whose stream is gone (or not started).
          const streamless = runIds.filter((id) => !chunks.has(id))
          if (streamless.length === 0) return { chunks, steps: new Map(), followups: new Map(), approvals: approvalOf }
          const [steps, followups] = yield* Effect.all([
            read(
              StepRows,
              sql`SELECT run_id, messages FROM run_steps WHERE ${sql.in("run_id", streamless)} ORDER BY run_id, step`
            ),
            read(
              FollowupRows,
              sql`SELECT run_id, id, text FROM run_followups
                WHERE ${sql.in("run_id", streamless)} AND status = 'delivered' ORDER BY run_id, seq`
            )
          ], { concurrency: 2 })
          return {
            chunks,
            steps: byRun(steps, (r) => r.messages),
            followups: byRun(followups, (r) => ({ id: r.id, text: r.text })),
            approvals: approvalOf
          }
        })
      }
    })
  )
}

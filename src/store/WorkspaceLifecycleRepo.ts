/**
 * What the lifecycle of managed workspaces asks of storage (spec 2.1.3
 * `lifecycle`, 2.2 statuses): when a thread's workspace was last used, the
 * idle workspaces to hibernate and the unused ones to archive (each its own
 * `idleMinutes` / `retentionDays`, else the defaults), and the statuses of the
 * workspaces a node holds on its disk.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schema } from "effect"
import { ThreadId } from "../../domain/Ids.ts"
import { WorkspaceStatus } from "../../domain/Thread.ts"

const decodeIds = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ id: ThreadId })))
const decodeStatuses = Schema.decodeUnknownEffect(
  Schema.Array(Schema.Struct({ id: ThreadId, status: Schema.NullOr(WorkspaceStatus) }))
)

export class WorkspaceLifecycleRepo extends Context.Service<WorkspaceLifecycleRepo, {
  /** The thread's workspace was used now (a run opened it or ended). */
  readonly markUsed: (threadId: ThreadId, at: string) => Effect.Effect<void>
  /** Active workspaces of idle threads unused for their idleMinutes become `hibernated`; their threads. */
  readonly hibernateIdle: (now: string, defaultIdleMinutes: number) => Effect.Effect<ReadonlyArray<ThreadId>>
  /**
   * Workspaces of idle threads unused for their retentionDays become `archived`, and their snapshots
   * are deleted, in one statement; their threads.
   */
  readonly archiveExpired: (now: string, defaultRetentionDays: number) => Effect.Effect<ReadonlyArray<ThreadId>>
  /** The workspace status of each of these threads that still exists (null: the thread has no workspace). */
  readonly statuses: (
    threadIds: ReadonlyArray<ThreadId>
  ) => Effect.Effect<ReadonlyMap<ThreadId, typeof WorkspaceStatus.Type | null>>
}>()("svc/WorkspaceLifecycleRepo") {
  static readonly layer = Layer.effect(WorkspaceLifecycleRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      return {
        markUsed: Effect.fn("WorkspaceLifecycleRepo.markUsed")(function*(threadId: ThreadId, at: string) {
          yield* sql`UPDATE threads SET workspace_used_at = ${at} WHERE id = ${threadId}`.pipe(Effect.orDie)
        }),
        hibernateIdle: Effect.fn("WorkspaceLifecycleRepo.hibernateIdle")(
          function*(now: string, defaultIdleMinutes: number) {
            return (yield* sql`UPDATE threads SET workspace = jsonb_build_object('status', 'hibernated', 'updatedAt', ${now}::text)
            WHERE workspace->>'status' = 'active' AND active_run_id IS NULL AND workspace_used_at IS NOT NULL
              AND workspace_used_at::timestamptz + make_interval(mins => COALESCE((workspace_spec->'lifecycle'->>'idleMinutes')::int, ${defaultIdleMinutes}))
                <= ${now}::timestamptz
            RETURNING id`.pipe(Effect.flatMap(decodeIds), Effect.orDie)).map((r) => r.id)
          }
        ),
        archiveExpired: Effect.fn("WorkspaceLifecycleRepo.archiveExpired")(
          function*(now: string, defaultRetentionDays: number) {
            return (yield* sql`WITH archived AS (
              UPDATE threads SET workspace = jsonb_build_object('status', 'archived', 'updatedAt', ${now}::text)
              WHERE workspace->>'status' NOT IN ('archived', 'uninitialized') AND active_run_id IS NULL AND workspace_used_at IS NOT NULL
                AND workspace_used_at::timestamptz + make_interval(days => COALESCE((workspace_spec->'lifecycle'->>'retentionDays')::int, ${defaultRetentionDays}))
                  <= ${now}::timestamptz
              RETURNING id
            ), deleted AS (DELETE FROM workspace_snapshots WHERE thread_id IN (SELECT id FROM archived))
            SELECT id FROM archived`.pipe(Effect.flatMap(decodeIds), Effect.orDie)).map((r) => r.id)
          }
        ),
        statuses: Effect.fn("WorkspaceLifecycleRepo.statuses")(function*(threadIds: ReadonlyArray<ThreadId>) {
          if (threadIds.length === 0) return new Map()
          const rows = yield* sql`SELECT id, workspace->>'status' AS status FROM threads WHERE ${
            sql.in("id", threadIds)
          }`.pipe(
            Effect.flatMap(decodeStatuses),
            Effect.orDie
          )
          return new Map(rows.map((r) => [r.id, r.status]))
        })
      }
    })
  )
}

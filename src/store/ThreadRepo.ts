/** Persistence of threads. */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { ManagedWorkspace } from "../../domain/Agent.ts"
import { Band } from "../../domain/Band.ts"
import { ContextBlock } from "../../domain/Context.ts"
import { AgentId, ThreadId } from "../../domain/Ids.ts"
import { Metadata } from "../../domain/Metadata.ts"
import { type Thread, ThreadStatus, ThreadWorkspace } from "../../domain/Thread.ts"
import { alive } from "../environments/EnvironmentRepo.ts"
import type { PreviousTurn } from "../threads/ContextPrefix.ts"
import { type AgentRow, agentRowOf } from "./AgentRepo.ts"
import type { Position } from "./Cursor.ts"

export interface ThreadRow extends Position {
  readonly id: ThreadId
  readonly thread: Thread
  readonly organizationId: string
  readonly workspaceId: string
  /** When PATCH last sent forceRefresh (ISO): a run started after it rebuilds the cached context prefix. */
  readonly contextRefreshAt: string | null
  /** The managed workspace spec pinned when the thread was created (null: the thread has no managed workspace). */
  readonly workspaceSpec: ManagedWorkspace | null
}

const Row = Schema.Struct({
  id: ThreadId,
  organization_id: Schema.String,
  workspace_id: Schema.String,
  agent_id: AgentId,
  context: Schema.Array(ContextBlock),
  context_refresh_at: Schema.NullOr(Schema.String),
  band: Schema.NullOr(Band),
  data_handling: Schema.NullOr(Schema.Literal("strict")),
  time_zone: Schema.NullOr(Schema.String),
  status: ThreadStatus,
  workspace: Schema.NullOr(ThreadWorkspace),
  workspace_spec: Schema.optionalKey(Schema.NullOr(ManagedWorkspace)),
  metadata: Metadata,
  created_at: Schema.String,
  updated_at: Schema.String
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))
const decodeRow = Schema.decodeUnknownEffect(Row)
const Previous = Schema.Struct({
  threadContext: Schema.NullOr(Schema.Array(Schema.String)),
  band: Band,
  createdAt: Schema.String,
  completedAt: Schema.NullOr(Schema.String)
})
const decodeJoined = Schema.decodeUnknownEffect(
  Schema.Array(
    Schema.Struct({ thread: Schema.Unknown, agent: Schema.NullOr(Schema.Unknown), previous: Schema.NullOr(Previous) })
  )
)

const toRow = (r: typeof Row.Type): ThreadRow => ({
  id: r.id,
  createdAt: r.created_at,
  organizationId: r.organization_id,
  workspaceId: r.workspace_id,
  contextRefreshAt: r.context_refresh_at,
  workspaceSpec: r.workspace_spec ?? null,
  thread: {
    id: r.id,
    object: "thread",
    agentId: r.agent_id,
    context: r.context,
    band: r.band,
    dataHandling: r.data_handling,
    timeZone: r.time_zone,
    status: r.status,
    workspace: r.workspace,
    metadata: r.metadata,
    createdAt: r.created_at,
    updatedAt: r.updated_at
  }
})

/**
 * A remote workspace's status (issue 31) as the thread shows it at `now`: `active` while a runner of the
 * agent's environment is connected, else `unavailable` (kept up to date by EnvironmentRepo).
 */
const remoteStatus = (sql: PgClient.PgClient, now: string) =>
  sql`jsonb_build_object('status', CASE WHEN EXISTS (SELECT 1 FROM environment_runners r
    WHERE r.environment_id = a.config->'workspace'->>'environmentId' AND ${alive(sql, now, "r")})
    THEN 'active' ELSE 'unavailable' END)`

export class ThreadRepo extends Context.Service<ThreadRepo, {
  /**
   * Inserts the thread when its agent exists in the row's workspace, in one
   * statement; the workspace status follows the agent's workspace type. None:
   * no such agent there (the caller finds out which error applies).
   */
  readonly insertForAgent: (row: ThreadRow) => Effect.Effect<Option.Option<ThreadRow>>
  readonly find: (id: ThreadId) => Effect.Effect<Option.Option<ThreadRow>>
  /** The thread, its agent and what its latest run was built with, in one read (undefined agent: it is gone). */
  readonly findWithAgent: (id: ThreadId) => Effect.Effect<
    Option.Option<
      { readonly thread: ThreadRow; readonly agent: AgentRow | undefined; readonly previous: PreviousTurn | null }
    >
  >
  readonly listByAgent: (
    agentId: AgentId,
    limit: number,
    after: Position | undefined
  ) => Effect.Effect<ReadonlyArray<ThreadRow>>
  /** Writes what a PATCH may change (never the workspace: its status has a writer of its own). */
  readonly update: (row: ThreadRow) => Effect.Effect<void>
  /** The agent's threads that have a managed workspace. */
  readonly withWorkspace: (agentId: AgentId) => Effect.Effect<ReadonlyArray<ThreadId>>
  /** The thread's workspace status (spec 2.2), with the time it changed. */
  readonly setWorkspaceStatus: (id: ThreadId, status: ThreadWorkspace["status"], at: string) => Effect.Effect<void>
  readonly remove: (id: ThreadId) => Effect.Effect<void>
}>()("svc/ThreadRepo") {
  static readonly layer = Layer.effect(ThreadRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const select = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeRows), Effect.map((rows) => rows.map(toRow)), Effect.orDie)

      return {
        insertForAgent: Effect.fn("ThreadRepo.insertForAgent")(function*(row: ThreadRow) {
          const t = row.thread
          const rows = yield* select(
            sql`INSERT INTO threads (id, organization_id, workspace_id, agent_id, context, context_refresh_at, band,
              data_handling, time_zone, status, workspace, workspace_spec, metadata, created_at, updated_at)
            SELECT ${t.id}, ${row.organizationId}, ${row.workspaceId}, a.id, ${sql.json(t.context)},
              ${row.contextRefreshAt}, ${t.band}, ${t.dataHandling}, ${t.timeZone}, ${t.status},
              CASE WHEN a.config->'workspace'->>'type' = 'managed' THEN '{"status":"uninitialized"}'::jsonb
                WHEN a.config->'workspace'->>'type' = 'remote' THEN ${remoteStatus(sql, t.createdAt)}
                ELSE NULL END,
              CASE WHEN a.config->'workspace'->>'type' = 'managed' THEN a.config->'workspace' ELSE NULL END,
              ${sql.json(t.metadata)}, ${t.createdAt}, ${t.updatedAt}
            FROM agents a WHERE a.id = ${t.agentId} AND a.organization_id = ${row.organizationId} AND a.workspace_id = ${row.workspaceId}
            RETURNING *`
          )
          return Option.fromNullishOr(rows[0])
        }),
        find: Effect.fn("ThreadRepo.find")(function*(id: ThreadId) {
          const rows = yield* select(sql`SELECT * FROM threads WHERE id = ${id}`)
          return Option.fromNullishOr(rows[0])
        }),
        findWithAgent: Effect.fn("ThreadRepo.findWithAgent")(function*(id: ThreadId) {
          const rows = yield* sql`SELECT to_jsonb(t.*) AS thread, to_jsonb(a.*) AS agent,
              (SELECT jsonb_build_object('threadContext', r.plan->'threadContext', 'band', r.config->>'band',
                  'createdAt', r.created_at, 'completedAt', r.completed_at)
                FROM runs r WHERE r.thread_id = t.id AND r.root_run_id IS NULL ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS previous
            FROM threads t LEFT JOIN agents a ON a.id = t.agent_id WHERE t.id = ${id}`.pipe(
            Effect.flatMap(decodeJoined),
            Effect.orDie
          )
          const found = rows[0]
          if (found === undefined) return Option.none()
          const thread = toRow(yield* decodeRow(found.thread).pipe(Effect.orDie))
          const previous = found.previous === null
            ? null
            : { ...found.previous, threadContext: found.previous.threadContext ?? undefined }
          return Option.some({
            thread,
            agent: found.agent === null ? undefined : yield* agentRowOf(found.agent),
            previous
          })
        }),
        listByAgent: Effect.fn("ThreadRepo.listByAgent")(
          function*(agentId: AgentId, limit: number, after: Position | undefined) {
            return yield* select(
              after === undefined
                ? sql`SELECT * FROM threads WHERE agent_id = ${agentId}
                      ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
                : sql`SELECT * FROM threads WHERE agent_id = ${agentId}
                      AND (created_at, id) < (${after.createdAt}, ${after.id})
                      ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
            )
          }
        ),
        update: Effect.fn("ThreadRepo.update")(function*(row: ThreadRow) {
          const t = row.thread
          yield* sql`UPDATE threads SET context = ${sql.json(t.context)}, context_refresh_at = ${row.contextRefreshAt},
              band = ${t.band}, data_handling = ${t.dataHandling}, time_zone = ${t.timeZone}, status = ${t.status},
              metadata = ${sql.json(t.metadata)}, updated_at = ${t.updatedAt}
            WHERE id = ${t.id}`.pipe(Effect.orDie)
        }),
        withWorkspace: Effect.fn("ThreadRepo.withWorkspace")(function*(agentId: AgentId) {
          const rows = yield* sql<
            { readonly id: ThreadId }
          >`SELECT id FROM threads WHERE agent_id = ${agentId} AND workspace_spec IS NOT NULL`.pipe(
            Effect.orDie
          )
          return rows.map((r) => r.id)
        }),
        setWorkspaceStatus: Effect.fn("ThreadRepo.setWorkspaceStatus")(
          function*(id: ThreadId, status: ThreadWorkspace["status"], at: string) {
            yield* sql`UPDATE threads SET workspace = ${sql.json({ status, updatedAt: at })}
            WHERE id = ${id} AND workspace IS NOT NULL`.pipe(Effect.orDie)
          }
        ),
        remove: Effect.fn("ThreadRepo.remove")(function*(id: ThreadId) {
          yield* sql`DELETE FROM threads WHERE id = ${id}`.pipe(Effect.orDie)
        })
      }
    })
  )
}

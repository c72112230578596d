/** Persistence of runs, their checkpoints, and the thread's active-run claim. */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Statement } from "effect/sql"
import { AttachmentRef, type Message, Message as MessageSchema, userMessage } from "../../domain/Conversation.ts"
import { type AgentId, RunId, ThreadId } from "../../domain/Ids.ts"
import { ParkRecord } from "../../domain/Park.ts"
import { RunError, type RunStatus as Status, UsageTotal } from "../../domain/Run.ts"
import type { Position } from "./Cursor.ts"
import { FreshRuns } from "./FreshRuns.ts"
import { nulFree } from "./NulFree.ts"
import { type NewRunRow, type RunRow, toRunRows } from "./RunRows.ts"

export { type NewRunRow, type RunRow, toRunRows } from "./RunRows.ts"

const decodeCreated = Schema.decodeUnknownEffect(
  Schema.Array(
    Schema.Struct({
      created: Schema.Number,
      existing: Schema.Boolean,
      has_history: Schema.Boolean,
      slot: Schema.NullOr(Schema.Boolean)
    })
  )
)

/**
 * How creating a run went: created, created already (the same Begin delivered again), the thread
 * was busy, or the workspace has its maximum of active runs.
 */
export type CreateResult = "created" | "existing" | "busy" | "capped"

const Step = Schema.Struct({ step: Schema.Number, messages: Schema.Array(MessageSchema), usage: UsageTotal })
const decodeSteps = Schema.decodeUnknownEffect(Schema.Array(Step))
export type Checkpoint = typeof Step.Type

export interface RunFilter {
  readonly agentId?: AgentId | undefined
  readonly threadId?: ThreadId | undefined
  readonly status?: Status | undefined
  readonly createdSince?: string | undefined
}

export interface StatusChange {
  readonly status: Status
  readonly terminalReason?: string | null
  readonly error?: typeof RunError.Type | null
  readonly usage?: typeof UsageTotal.Type
  readonly startedAt?: string
  readonly completedAt?: string
}

/**
 * Changes to a run's row made within a stream write. A write updates the row
 * at most once (PostgreSQL applies only one of two updates of a row in one
 * statement), so the changes of one write are merged, later ones winning.
 */
export interface RunChange extends Partial<StatusChange> {
  /** The parked step is dropped (the run ended while parked). */
  readonly clearPark?: boolean
  /**
   * The run parks: its step is stored with its deadline, its generation bumped (each resume is a
   * distinct Start) and its executor cleared (whoever resumes it becomes one).
   */
  readonly park?: { readonly record: ParkRecord; readonly deadline: string | null }
  /** The process executing the run (NodeRepo.id). */
  readonly executor?: string
  /** A step was completed: the recovery pass's count of attempts starts over (it counts attempts without progress). */
  readonly progressed?: boolean
}

export const mergeChanges = (changes: ReadonlyArray<RunChange>): RunChange => Object.assign({}, ...changes)

/** A run this process just created, handed to its first execution without reading it back. */
export interface FreshRun {
  readonly row: RunRow
  /** Whether the thread had runs before this one (else there is no history to read). */
  readonly hasHistory: boolean
}

/** Statements to run within another write (the event log's), never on their own. */
export interface RunStatements {
  /** One update of the run's row (merge the changes of one write first). */
  readonly change: (id: RunId, change: RunChange, now: string) => Statement.Fragment
  readonly releaseThread: (threadId: ThreadId, runId: RunId, now: string) => Statement.Fragment
  /** The step's checkpoint (its running totals go on the run's row as a change). */
  readonly checkpoint: (
    runId: RunId,
    step: number,
    messages: ReadonlyArray<Message>,
    usage: typeof UsageTotal.Type,
    now: string
  ) => Statement.Fragment
  /** Fails the run (unless it already ended) and frees its thread. */
  readonly reap: (runId: RunId, error: typeof RunError.Type, now: string) => ReadonlyArray<Statement.Fragment>
}

export class RunRepo extends Context.Service<RunRepo, {
  readonly insert: (row: NewRunRow) => Effect.Effect<void>
  /**
   * Claims the thread for the new run and inserts it, in one statement; with
   * `maxActiveRuns`, only while the workspace has fewer runs queued, preparing
   * or running (svc_workspace_slot). The created run is kept for `takeFresh`.
   */
  readonly createClaimed: (row: NewRunRow, maxActiveRuns?: number | null) => Effect.Effect<CreateResult>
  /** The run as just created by this process, once (its first execution); none after that. */
  readonly takeFresh: (id: RunId) => Option.Option<FreshRun>
  readonly statements: RunStatements
  readonly find: (id: RunId) => Effect.Effect<Option.Option<RunRow>>
  /**
   * Claims the run while its status is one of `among`: its attempt is bumped, so every write
   * fenced by an earlier claim does nothing from now on. The run as claimed (none: not in `among`).
   * `executor`: the claiming process executes the run from now on (written at once when the run is
   * queued or running, so the recovery pass sees it taken before its first chunk).
   */
  readonly claim: (id: RunId, among: ReadonlyArray<Status>, executor?: string) => Effect.Effect<Option.Option<RunRow>>
  /** A run as a public resource: a worker run is not one (it is scoped under its root, spec 4.3 rule 5). */
  readonly findRoot: (id: RunId) => Effect.Effect<Option.Option<RunRow>>
  readonly list: (
    scope: { readonly organizationId: string; readonly workspaceId: string },
    filter: RunFilter,
    limit: number,
    after: Position | undefined
  ) => Effect.Effect<ReadonlyArray<RunRow>>
  /**
   * A parked run whose waits are all settled is running again (until its execution resumes it);
   * false when it is not parked any more (it ended meanwhile: expired, cancelled).
   */
  readonly markResuming: (id: RunId, now: string) => Effect.Effect<boolean>
  readonly checkpoints: (runId: RunId) => Effect.Effect<ReadonlyArray<Checkpoint>>
  /** The conversation of the thread's earlier runs: each run's user input, then its steps. */
  readonly history: (threadId: ThreadId, beforeCreatedAt: string) => Effect.Effect<ReadonlyArray<Message>>
  /** Marks the thread busy with `runId`; false when another run holds it. */
  readonly claimThread: (threadId: ThreadId, runId: RunId, now: string) => Effect.Effect<boolean>
  readonly releaseThread: (threadId: ThreadId, runId: RunId, now: string) => Effect.Effect<void>
  readonly activeRun: (threadId: ThreadId) => Effect.Effect<RunId | null>
  /** Drops the parked step (the run ended while parked). */
  readonly clearPark: (runId: RunId, now: string) => Effect.Effect<void>
  /** Heartbeat of an executing run; false once a later claim took the run. */
  readonly touch: (runId: RunId, attempt: number | undefined, now: string) => Effect.Effect<boolean>
  /**
   * An execution stopped without ending its run (its runner handed the run's shard to another, or is
   * shutting down): the run has no executor from now on, so the recovery pass dispatches it again.
   */
  readonly release: (runId: RunId, attempt: number, now: string) => Effect.Effect<boolean>
}>()("svc/RunRepo") {
  static readonly layer = Layer.effect(RunRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const select = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        Effect.flatMap(Effect.orDie(query), toRunRows)
      const fresh = new FreshRuns<FreshRun>()
      /** The claim condition of a fenced statement (none: unfenced). */
      const held = (attempt: number | undefined) => (attempt === undefined ? sql`` : sql`AND attempt = ${attempt}`)
      const updated = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        Effect.map(Effect.orDie(query), (rows) => rows.length > 0)
      const change = (id: RunId, c: RunChange, now: string) =>
        sql`UPDATE runs SET status = ${c.status === undefined ? sql`status` : c.status},
            park = ${c.park !== undefined ? sql.json(nulFree(c.park.record)) : c.clearPark === true ? null : sql`park`},
            park_deadline = ${
          c.park !== undefined ? c.park.deadline : c.clearPark === true ? null : sql`park_deadline`
        },
            generation = ${c.park !== undefined ? sql`generation + 1` : sql`generation`},
            executor = ${c.park !== undefined ? null : c.executor === undefined ? sql`executor` : c.executor},
            recovery_attempts = ${c.progressed === true ? 0 : sql`recovery_attempts`},
            terminal_reason = ${c.terminalReason === undefined ? sql`terminal_reason` : c.terminalReason},
            error = ${c.error === undefined ? sql`error` : c.error === null ? null : sql.json(nulFree(c.error))},
            usage = ${c.usage === undefined ? sql`usage` : sql.json(c.usage)},
            started_at = ${c.startedAt === undefined ? sql`started_at` : c.startedAt},
            completed_at = ${c.completedAt === undefined ? sql`completed_at` : c.completedAt},
            updated_at = ${now}
          WHERE id = ${id}`
      const releaseThread = (threadId: ThreadId, runId: RunId, now: string) =>
        sql`UPDATE threads SET status = 'idle', active_run_id = NULL, updated_at = ${now}
          WHERE id = ${threadId} AND active_run_id = ${runId}`
      const statements: RunStatements = {
        change,
        releaseThread,
        checkpoint: (runId, step, messages, usage, now) =>
          sql`INSERT INTO run_steps (run_id, step, messages, usage, created_at)
            VALUES (${runId}, ${step}, ${sql.json(nulFree(messages))}, ${sql.json(usage)}, ${now})
            ON CONFLICT (run_id, step) DO NOTHING`,
        reap: (runId, error, now) => [
          sql`UPDATE runs SET status = 'failed', terminal_reason = 'run_recovery_reaped', error = ${
            sql.json(nulFree(error))
          },
              completed_at = ${now}, updated_at = ${now}
            WHERE id = ${runId} AND status NOT IN ('completed', 'failed', 'cancelled')`,
          sql`UPDATE threads SET status = 'idle', active_run_id = NULL, updated_at = ${now} WHERE active_run_id = ${runId}`
        ]
      }
      const insert = Effect.fn("RunRepo.insert")(function*(row: NewRunRow) {
        const r = row.run
        yield* sql`INSERT INTO runs (id, organization_id, workspace_id, thread_id, agent_id, status, terminal_reason, error,
              usage, config, plan, metadata, idempotency_key, created_at, started_at, completed_at, updated_at)
            VALUES (${r.id}, ${row.organizationId}, ${row.workspaceId}, ${r.threadId}, ${r.agentId}, ${r.status}, NULL, NULL,
              ${sql.json(r.usage)}, ${sql.json(r.config)}, ${sql.json(row.plan)}, ${sql.json(r.metadata)},
              ${row.idempotencyKey}, ${r.createdAt}, NULL, NULL, ${r.createdAt})`.pipe(Effect.orDie)
      })
      return {
        insert,
        createClaimed: Effect.fn("RunRepo.createClaimed")(
          function*(row: NewRunRow, maxActiveRuns: number | null = null) {
            const r = row.run
            const slot = maxActiveRuns === null
              ? sql`SELECT NULL::boolean AS ok`
              : sql`SELECT svc_workspace_slot(${row.organizationId}, ${row.workspaceId}, ${maxActiveRuns}::int) AS ok`
            // The claim and the insert in one statement: the thread row lock serializes claimants, and
            // the snapshot tells whether the thread had runs before this one.
            // A run that exists already was created by this Begin, delivered before (its reply was lost).
            const rows = yield* sql`WITH slot AS (${slot}), claimed AS (
              UPDATE threads SET status = 'running', active_run_id = ${r.id}, updated_at = ${r.createdAt}
              WHERE id = ${r.threadId} AND active_run_id IS NULL AND (SELECT ok FROM slot) IS NOT FALSE
                AND NOT EXISTS (SELECT 1 FROM runs WHERE id = ${r.id}) RETURNING id
            ), created AS (
              INSERT INTO runs (id, organization_id, workspace_id, thread_id, agent_id, status, terminal_reason, error,
                usage, config, plan, metadata, idempotency_key, created_at, started_at, completed_at, updated_at)
              SELECT ${r.id}, ${row.organizationId}, ${row.workspaceId}, ${r.threadId}, ${r.agentId}, ${r.status}, NULL, NULL,
                ${sql.json(r.usage)}, ${sql.json(r.config)}, ${sql.json(row.plan)}, ${sql.json(r.metadata)},
                ${row.idempotencyKey}, ${r.createdAt}, NULL, NULL, ${r.createdAt}
              FROM claimed RETURNING id
            )
            SELECT (SELECT count(*) FROM created)::int AS created,
              EXISTS (SELECT 1 FROM runs WHERE id = ${r.id}) AS existing,
              EXISTS (SELECT 1 FROM runs WHERE thread_id = ${r.threadId}) AS has_history,
              (SELECT ok FROM slot) AS slot`.pipe(
              Effect.flatMap(decodeCreated),
              Effect.orDie
            )
            const created = rows[0]?.created === 1
            if (created) {
              fresh.put(r.id, {
                row: { ...row, generation: 0, attempt: 0, park: null, parkDeadline: null },
                hasHistory: rows[0]?.has_history === true
              })
            }
            return created
              ? "created"
              : rows[0]?.existing === true
              ? "existing"
              : rows[0]?.slot === false
              ? "capped"
              : "busy"
          }
        ),
        takeFresh: (id: RunId) => fresh.take(id),
        statements,
        find: Effect.fn("RunRepo.find")(function*(id: RunId) {
          return Option.fromNullishOr((yield* select(sql`SELECT * FROM runs WHERE id = ${id}`))[0])
        }),
        claim: Effect.fn("RunRepo.claim")(function*(id: RunId, among: ReadonlyArray<Status>, executor?: string) {
          const taken = executor === undefined
            ? sql``
            : sql`, executor = CASE WHEN status IN ('queued', 'running') THEN ${executor} ELSE executor END`
          return Option.fromNullishOr(
            (yield* select(
              sql`UPDATE runs SET attempt = attempt + 1 ${taken} WHERE id = ${id} AND ${
                sql.in("status", among)
              } RETURNING *`
            ))[0]
          )
        }),
        findRoot: Effect.fn("RunRepo.findRoot")(function*(id: RunId) {
          return Option.fromNullishOr(
            (yield* select(sql`SELECT * FROM runs WHERE id = ${id} AND root_run_id IS NULL`))[0]
          )
        }),
        list: Effect.fn("RunRepo.list")(
          function*(scope, filter: RunFilter, limit: number, after: Position | undefined) {
            const conditions = [
              sql`organization_id = ${scope.organizationId}`,
              sql`workspace_id = ${scope.workspaceId}`,
              // Worker runs are scoped under their root, never listed on their own (spec 4.3 rule 5).
              sql`root_run_id IS NULL`,
              ...(filter.agentId === undefined ? [] : [sql`agent_id = ${filter.agentId}`]),
              ...(filter.threadId === undefined ? [] : [sql`thread_id = ${filter.threadId}`]),
              ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
              ...(filter.createdSince === undefined ? [] : [sql`created_at >= ${filter.createdSince}`]),
              ...(after === undefined ? [] : [sql`(created_at, id) < (${after.createdAt}, ${after.id})`])
            ]
            return yield* select(
              sql`SELECT * FROM runs WHERE ${sql.and(conditions)} ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
            )
          }
        ),
        markResuming: Effect.fn("RunRepo.markResuming")(function*(id: RunId, now: string) {
          return yield* updated(sql`UPDATE runs SET status = 'running', updated_at = ${now}
            WHERE id = ${id} AND park IS NOT NULL AND status IN ('waiting_for_approval', 'waiting_for_input', 'running') RETURNING id`)
        }),
        checkpoints: Effect.fn("RunRepo.checkpoints")(function*(runId: RunId) {
          return yield* sql`SELECT step, messages, usage FROM run_steps WHERE run_id = ${runId} ORDER BY step`.pipe(
            Effect.flatMap(decodeSteps),
            Effect.orDie
          )
        }),
        history: Effect.fn("RunRepo.history")(function*(threadId: ThreadId, beforeCreatedAt: string) {
          const rows = yield* sql`SELECT r.id, r.plan->>'input' AS input, r.plan->'attachments' AS attachments,
                COALESCE((SELECT jsonb_agg(s.messages ORDER BY s.step) FROM run_steps s WHERE s.run_id = r.id), '[]'::jsonb) AS steps
              FROM runs r WHERE r.thread_id = ${threadId} AND r.created_at < ${beforeCreatedAt} AND r.root_run_id IS NULL
              ORDER BY r.created_at, r.id`.pipe(
            Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
              id: Schema.String,
              input: Schema.String,
              attachments: Schema.NullOr(Schema.Array(AttachmentRef)),
              steps: Schema.Array(Schema.Array(MessageSchema))
            })))),
            Effect.orDie
          )
          return rows.flatMap((
            r
          ): Array<Message> => [userMessage(r.input, r.attachments ?? undefined), ...r.steps.flat()])
        }),
        claimThread: Effect.fn("RunRepo.claimThread")(function*(threadId: ThreadId, runId: RunId, now: string) {
          const rows = yield* sql`UPDATE threads SET status = 'running', active_run_id = ${runId}, updated_at = ${now}
            WHERE id = ${threadId} AND (active_run_id IS NULL OR active_run_id = ${runId}) RETURNING id`.pipe(
            Effect.orDie
          )
          return rows.length > 0
        }),
        releaseThread: Effect.fn("RunRepo.releaseThread")(function*(threadId: ThreadId, runId: RunId, now: string) {
          yield* releaseThread(threadId, runId, now).pipe(Effect.orDie)
        }),
        clearPark: Effect.fn("RunRepo.clearPark")(function*(runId: RunId, now: string) {
          yield* change(runId, { clearPark: true }, now).pipe(Effect.orDie)
        }),
        touch: Effect.fn("RunRepo.touch")(function*(runId: RunId, attempt: number | undefined, now: string) {
          return yield* updated(
            sql`UPDATE runs SET updated_at = ${now} WHERE id = ${runId} ${held(attempt)} RETURNING id`
          )
        }),
        release: Effect.fn("RunRepo.release")(function*(runId: RunId, attempt: number, now: string) {
          return yield* updated(sql`UPDATE runs SET executor = NULL, updated_at = ${now}
            WHERE id = ${runId} AND status IN ('queued', 'running') ${held(attempt)} RETURNING id`)
        }),
        activeRun: Effect.fn("RunRepo.activeRun")(function*(threadId: ThreadId) {
          const rows = yield* sql`SELECT active_run_id FROM threads WHERE id = ${threadId}`.pipe(
            Effect.flatMap(
              Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ active_run_id: Schema.NullOr(RunId) })))
            ),
            Effect.orDie
          )
          return rows[0]?.active_run_id ?? null
        })
      }
    })
  )
}

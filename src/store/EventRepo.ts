/**
 * Storage of run streams: `run_events` rows (one per chunk, by sequence
 * number), written together with other statements in one statement, and the
 * NOTIFY channel the database raises on every write (a trigger). A write made
 * under a claim of the run (its `attempt`) is fenced: it does nothing unless
 * the claim is still the latest (migration 0020_fencing).
 */
import { PgClient } from "@effect/sql-pg"
import { Array as Arr, Cause, Context, Data, Effect, Layer, Queue, Schema, type Scope } from "effect"
import type { SqlError, Statement } from "effect/sql"
import { Chunk, type SequencedChunk } from "../../domain/Chunk.ts"
import { fencedMark } from "./migrations/0020_fencing.ts"

/** A write under a claim that a later claim of the run replaced: nothing was written. */
export class RunFenced extends Data.TaggedError("RunFenced")<{ readonly runId: string }> {}

const mentionsFence = (value: unknown): boolean =>
  typeof value === "object" && value !== null && "message" in value && typeof value.message === "string" &&
  value.message.includes(fencedMark)

const isFenced = (e: SqlError.SqlError): boolean =>
  mentionsFence(e) || mentionsFence(e.reason) || mentionsFence(e.reason.cause)

const channel = "svc_run_events"
const Rows = Schema.Array(Schema.Struct({ seq: Schema.Number, chunk: Chunk }))
const decodeRows = Schema.decodeUnknownEffect(Rows)
const MaxSeqRows = Schema.Array(
  Schema.Struct({ max: Schema.NullOr(Schema.Union([Schema.Number, Schema.NumberFromString])) })
)

export class EventRepo extends Context.Service<EventRepo, {
  /** Stored chunks after `afterSeq`, oldest first, at most `limit`. */
  readonly read: (runId: string, afterSeq: number, limit: number) => Effect.Effect<ReadonlyArray<SequencedChunk>>
  readonly lastSeq: (runId: string) => Effect.Effect<number>
  /**
   * One statement: `attached` (data-modifying statements) as CTEs, then the chunks' INSERT; with
   * `attempt`, all of it only while that claim of the run is the latest (else RunFenced).
   */
  readonly write: (
    runId: string,
    rows: ReadonlyArray<SequencedChunk>,
    attached: ReadonlyArray<Statement.Fragment>,
    attempt?: number
  ) => Effect.Effect<void, RunFenced>
  /** The ids of runs whose streams grew, as the database announces them (PostgreSQL only). */
  readonly notifications: Effect.Effect<Queue.Dequeue<string>, never, Scope.Scope>
}>()("svc/EventRepo") {
  static readonly layer = Layer.effect(EventRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      return {
        read: (runId, afterSeq, limit) =>
          sql`SELECT seq, chunk FROM run_events WHERE run_id = ${runId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`
            .pipe(
              Effect.flatMap(decodeRows),
              Effect.orDie
            ),
        lastSeq: (runId) =>
          sql`SELECT max(seq) AS max FROM run_events WHERE run_id = ${runId}`.pipe(
            Effect.flatMap(Schema.decodeUnknownEffect(MaxSeqRows)),
            Effect.map((rows) => Number(rows[0]?.max ?? 0)),
            Effect.orDie
          ),
        write: (runId, rows, attached, attempt) => {
          const records = rows.map((r): Record<string, unknown> => ({
            run_id: runId,
            seq: r.seq,
            chunk: JSON.stringify(r.chunk)
          }))
          const insert = Arr.isReadonlyArrayNonEmpty(records)
            ? sql`INSERT INTO run_events ${sql.insert(records)} ON CONFLICT (run_id, seq) DO NOTHING`
            : undefined
          /** `statements` as CTEs of one statement whose own query is `main`. */
          const withCtes = (statements: ReadonlyArray<Statement.Fragment>, main: Statement.Fragment) =>
            statements.length === 0
              ? main
              : sql`WITH ${sql.join(", ", false)(statements.map((s, i) => sql`${sql(`w${i}`)} AS (${s})`))} ${main}`
          if (attempt !== undefined) {
            // The fence is the statement's own query: it always runs, and if it raises nothing of the statement stays.
            const statements = insert === undefined ? attached : [...attached, insert]
            if (statements.length === 0) return Effect.void
            return sql`${withCtes(statements, sql`SELECT svc_fence(${runId}, ${attempt}::int)`)}`.pipe(
              Effect.asVoid,
              Effect.catchTag("SqlError", (e) => (isFenced(e) ? Effect.fail(new RunFenced({ runId })) : Effect.die(e)))
            )
          }
          if (attached.length === 0 && insert === undefined) return Effect.void
          return sql`${withCtes(attached, insert ?? sql`SELECT 1`)}`.pipe(Effect.asVoid, Effect.orDie)
        },
        notifications: Effect.gen(function*() {
          const queue = yield* Queue.unbounded<string>()
          const listened = yield* sql.listen(channel).pipe(Effect.orDie)
          yield* Effect.forkScoped(
            Effect.forever(Effect.flatMap(Queue.take(listened), (n) => Queue.offer(queue, n.payload))).pipe(
              // Interrupted: the scope closed (the process stops). Anything else stops the notifications for good.
              Effect.catchCause((cause) =>
                Cause.hasInterruptsOnly(cause)
                  ? Effect.void
                  : Effect.logError("event notifications stopped: the LISTEN connection failed", cause)
              )
            )
          )
          return queue
        })
      }
    })
  )
}

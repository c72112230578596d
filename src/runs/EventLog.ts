/**
 * The durable run stream. Every chunk gets a sequence number and is stored in
 * `run_events` before anyone sees it; followers replay from the table and
 * then follow new rows, woken by a signal: an in-process PubSub, fed on
 * PostgreSQL by LISTEN/NOTIFY so any node can follow any run. A run has one
 * writer (its RunEntity); the writer batches naturally: while one INSERT is in
 * flight the next chunks accumulate and go in the next one.
 */
import { PgClient } from "@effect/sql-pg"
import { Array as Arr, Context, Deferred, Effect, Layer, Option, PubSub, Queue, Schema, type Scope, Stream } from "effect"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { Chunk, isStreamEnd, type SequencedChunk } from "../../domain/Chunk.ts"
import { newIdSync } from "../Ids.ts"

export type { SequencedChunk } from "../../domain/Chunk.ts"

/** A run's log grew: with the chunks when written on this node. */
interface Signal {
  readonly runId: string
  readonly chunks: ReadonlyArray<SequencedChunk> | undefined
}

const channel = "svc_run_events"
const Rows = Schema.Array(Schema.Struct({ seq: Schema.Number, chunk: Chunk }))
const decodeRows = Schema.decodeUnknownEffect(Rows)
const MaxSeqRows = Schema.Array(Schema.Struct({ max: Schema.NullOr(Schema.Union([Schema.Number, Schema.NumberFromString])) }))


export interface Writer {
  /** The last sequence number stored when the writer opened (0: a fresh stream). */
  readonly startSeq: number
  /** Queues a chunk; returns its sequence number. */
  readonly emit: (chunk: Chunk) => Effect.Effect<number>
  /** Waits until every chunk emitted so far is stored and announced. */
  readonly flush: Effect.Effect<void>
  /**
   * Stores every chunk emitted so far and runs `effect` in the same
   * transaction, before anyone is told: followers that see the final chunks
   * also see what `effect` wrote (the run's terminal status).
   */
  readonly commit: (effect: Effect.Effect<void>) => Effect.Effect<void>
}

export class EventLog extends Context.Service<EventLog, {
  readonly lastSeq: (runId: string) => Effect.Effect<number>
  /** The run's single writer, continuing after the last stored sequence number. */
  readonly writer: (runId: string) => Effect.Effect<Writer, never, Scope.Scope>
  /**
   * Stored chunks after `afterSeq`, then live ones, until a finish or abort
   * chunk with nothing after it while `settled` holds (the run ended or is
   * parked; a resuming run goes on in the same log).
   */
  readonly follow: (runId: string, afterSeq: number, settled: Effect.Effect<boolean>) => Stream.Stream<SequencedChunk>
  /** Stored chunks after `afterSeq`, without following. */
  readonly read: (runId: string, afterSeq: number) => Effect.Effect<ReadonlyArray<SequencedChunk>>
}>()("svc/EventLog") {
  static readonly layer = Layer.effect(EventLog)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const config = yield* ServiceConfig
      const distributed = Option.isSome(config.databaseUrl)
      // Local writes carry their chunks, so followers on this node need not read them back;
      // another node's write (a NOTIFY) only says that there is something to read.
      const signals = yield* PubSub.unbounded<Signal>()
      const node = newIdSync("request").slice(4)

      if (distributed) {
        const notifications = yield* sql.listen(channel).pipe(Effect.orDie)
        yield* Effect.forkScoped(
          Effect.forever(
            Effect.flatMap(Queue.take(notifications), (n) => {
              const [from, runId] = n.payload.split(":")
              return from === node || runId === undefined ? Effect.void : PubSub.publish(signals, { runId, chunks: undefined })
            })
          ).pipe(Effect.catchCause(() => Effect.void))
        )
      }

      const read = (runId: string, afterSeq: number) =>
        sql`SELECT seq, chunk FROM run_events WHERE run_id = ${runId} AND seq > ${afterSeq} ORDER BY seq LIMIT 1000`.pipe(
          Effect.flatMap(decodeRows),
          Effect.map((rows): ReadonlyArray<SequencedChunk> => rows),
          Effect.orDie
        )

      const lastSeq = (runId: string) =>
        sql`SELECT max(seq) AS max FROM run_events WHERE run_id = ${runId}`.pipe(
          Effect.flatMap(Schema.decodeUnknownEffect(MaxSeqRows)),
          Effect.map((rows) => Number(rows[0]?.max ?? 0)),
          Effect.orDie
        )

      const announce = (runId: string, chunks: ReadonlyArray<SequencedChunk>) =>
        distributed
          ? Effect.andThen(PubSub.publish(signals, { runId, chunks }), sql.notify(channel, `${node}:${runId}`).pipe(Effect.orDie))
          : PubSub.publish(signals, { runId, chunks })

      const writer = Effect.fn("EventLog.writer")(function*(runId: string) {
        let seq = yield* lastSeq(runId)
        const startSeq = seq
        const pending = yield* Queue.unbounded<
          | { readonly _tag: "Chunk"; readonly seq: number; readonly chunk: Chunk }
          | { readonly _tag: "Flush"; readonly done: Deferred.Deferred<void>; readonly with?: Effect.Effect<void> }
        >()
        yield* Effect.forkScoped(
          Effect.forever(
            Effect.gen(function*() {
              const batch = yield* Queue.takeAll(pending)
              const rows = batch.flatMap((item): Array<Record<string, unknown>> =>
                item._tag === "Chunk" ? [{ run_id: runId, seq: item.seq, chunk: JSON.stringify(item.chunk) }] : []
              )
              const hooks = batch.flatMap((item) => (item._tag === "Flush" && item.with !== undefined ? [item.with] : []))
              const insert = Arr.isReadonlyArrayNonEmpty(rows)
                ? sql`INSERT INTO run_events ${sql.insert(rows)} ON CONFLICT (run_id, seq) DO NOTHING`.pipe(Effect.orDie)
                : Effect.void
              yield* (hooks.length === 0 ? insert : sql.withTransaction(Effect.andThen(insert, Effect.all(hooks))).pipe(Effect.orDie))
              if (rows.length > 0) {
                yield* announce(
                  runId,
                  batch.flatMap((item) => (item._tag === "Chunk" ? [{ seq: item.seq, chunk: item.chunk }] : []))
                )
              }
              for (const item of batch) if (item._tag === "Flush") yield* Deferred.succeed(item.done, undefined)
            })
          )
        )
        const commit = (effect?: Effect.Effect<void>) =>
          Effect.gen(function*() {
            const done = yield* Deferred.make<void>()
            yield* Queue.offer(pending, effect === undefined ? { _tag: "Flush", done } : { _tag: "Flush", done, with: effect })
            yield* Deferred.await(done)
          })
        const flush = commit()
        // Whatever was emitted is stored before the writer goes away.
        yield* Effect.addFinalizer(() => flush)
        return {
          startSeq,
          emit: (chunk: Chunk) =>
            Effect.suspend(() => {
              seq += 1
              const item = { _tag: "Chunk" as const, seq, chunk }
              return Effect.as(Queue.offer(pending, item), item.seq)
            }),
          flush,
          commit
        }
      })

      const follow = (runId: string, afterSeq: number, settled: Effect.Effect<boolean>): Stream.Stream<SequencedChunk> =>
        Stream.unwrap(
          Effect.gen(function*() {
            // Subscribe before the first read so that no write is missed.
            const subscription = yield* PubSub.subscribe(signals)
            /** Chunks announced after `cursor`: taken from local signals when they continue it, else read. */
            const next = (cursor: number, mustRead: boolean) =>
              Effect.gen(function*() {
                if (mustRead) return { rows: yield* read(runId, cursor), read: true }
                while (true) {
                  const mine = (yield* PubSub.takeAll(subscription)).filter((signal) => signal.runId === runId)
                  if (mine.length === 0) continue
                  if (mine.some((signal) => signal.chunks === undefined)) return { rows: yield* read(runId, cursor), read: true }
                  const fresh = mine.flatMap((signal) => signal.chunks ?? []).filter((c) => c.seq > cursor)
                  if (fresh.length === 0) continue
                  const contiguous = fresh.every((c, i) => c.seq === cursor + 1 + i)
                  return contiguous ? { rows: fresh, read: false } : { rows: yield* read(runId, cursor), read: true }
                }
              })
            // A finish or abort ends the stream when nothing follows it; a parked run's log goes on after its
            // `finish` once it resumes, so a replay reads past it.
            return Stream.paginate({ cursor: afterSeq, mustRead: true, endIfEmpty: false }, (state) =>
              Effect.gen(function*() {
                const { rows, read: wasRead } = yield* next(state.cursor, state.mustRead)
                if (rows.length === 0) {
                  return state.endIfEmpty && (yield* settled)
                    ? [[], Option.none()] as const
                    : [[], Option.some({ cursor: state.cursor, mustRead: false, endIfEmpty: state.endIfEmpty })] as const
                }
                const last = rows[rows.length - 1]
                if (isStreamEnd(last.chunk)) {
                  return [rows, Option.some({ cursor: last.seq, mustRead: true, endIfEmpty: true })] as const
                }
                // A full page read from the table may have more behind it.
                const more = wasRead && rows.length === 1000
                return [rows, Option.some({ cursor: last.seq, mustRead: more, endIfEmpty: false })] as const
              }))
          })
        ).pipe(Stream.scoped)

      return { lastSeq, writer, follow, read }
    })
  )
}

/**
 * The durable run stream. Every chunk gets a sequence number and is stored in
 * `run_events` before anyone sees it. A run has one writer (its RunEntity);
 * the writer batches naturally: while one write is in flight the next chunks
 * accumulate and go in the next one, together with the statements the loop
 * attached (the run's status, its checkpoint, its end), as one statement.
 * Followers on the writer's node take chunks from memory (RecentChunks); a
 * trigger NOTIFYs other nodes' followers, who read the table; a write wakes
 * the followers of its run only (StreamSignals). A writer opened under a
 * claim of the run (`attempt`) is fenced: once a later claim replaced it,
 * nothing more is written and `lost` resolves (the execution stops).
 */
import {
  Context,
  Data,
  Deferred,
  Duration,
  Effect,
  Latch,
  Layer,
  Option,
  Queue,
  Schema,
  type Scope,
  Stream
} from "effect"
import type { Statement } from "effect/sql"
import { Chunk, isFinalEnd, isStreamEnd, type SequencedChunk } from "../../domain/Chunk.ts"
import type { RunId } from "../../domain/Ids.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { EventRepo } from "../store/EventRepo.ts"
import { hasNul, nulFree } from "../store/NulFree.ts"
import { mergeChanges, type RunChange, RunRepo } from "../store/RunRepo.ts"
import { nowIso } from "../Time.ts"
import { RecentChunks } from "./RecentChunks.ts"
import { StreamSignals, type Subscription } from "./StreamSignals.ts"

export type { SequencedChunk } from "../../domain/Chunk.ts"

const pageSize = 1000

const decodeChunk = Schema.decodeUnknownEffect(Chunk)

/**
 * A chunk as it is stored and as every follower sees it, live or replayed: a
 * NUL from a model or a tool becomes U+FFFD (src/store/NulFree.ts).
 */
const storable = (chunk: Chunk): Effect.Effect<Chunk> =>
  hasNul(chunk) ? Effect.orDie(decodeChunk(nulFree(chunk))) : Effect.succeed(chunk)

/**
 * What goes into the next write with the chunks: data-modifying statements (as
 * CTEs, so in the same statement) and changes to the run's row (merged into one
 * update per write).
 */
export type Attached = Statement.Fragment | { readonly _tag: "RunChange"; readonly change: RunChange }

export const runChange = (change: RunChange): Attached => ({ _tag: "RunChange", change })

const isRunChange = (a: Attached): a is { readonly _tag: "RunChange"; readonly change: RunChange } =>
  "_tag" in a && a._tag === "RunChange"

export interface Writer {
  /** The last sequence number stored when the writer opened (0: a fresh stream). */
  readonly startSeq: number
  /** The claim of the run its writes are fenced by (undefined: not fenced). */
  readonly attempt: number | undefined
  /** Resolves once the claim was lost: a later claim of the run fenced this writer out. */
  readonly lost: Effect.Effect<void>
  readonly isLost: Effect.Effect<boolean>
  /**
   * Marks the claim lost (a fenced write outside the writer found it replaced) and never returns:
   * whoever uses a fenced writer races its work against `lost` (see `fenced`).
   */
  readonly lose: Effect.Effect<never>
  /** Queues a chunk; returns its sequence number. */
  readonly emit: (chunk: Chunk) => Effect.Effect<number>
  /** Waits until every chunk emitted so far is stored and announced (never returns once the claim is lost). */
  readonly flush: Effect.Effect<void>
  /**
   * Holds writes back until `release`, a flush, or 100 ms: the chunks that open
   * a step go in the same write as the model's first answer chunks.
   */
  readonly hold: Effect.Effect<void>
  readonly release: Effect.Effect<void>
  /** Adds statements to the next write, without waiting for it. */
  readonly attach: (statements: ReadonlyArray<Attached>) => Effect.Effect<void>
  /**
   * Stores every chunk emitted so far and runs `statements` in the same
   * statement, before anyone is told: followers that see the final chunks
   * also see what they wrote (the run's terminal status).
   */
  readonly commit: (statements: ReadonlyArray<Attached>) => Effect.Effect<void>
}

/**
 * Runs `effect` for as long as the writer holds its claim: once a later claim fenced it out,
 * `effect` is interrupted (its tool calls with it) and the result is undefined.
 */
export const fenced = <A, E, R>(writer: Writer, effect: Effect.Effect<A, E, R>): Effect.Effect<A | undefined, E, R> =>
  Effect.raceFirst(effect, Effect.as(writer.lost, undefined))

/** A subscription to stream writes taken before the run it follows was created. */
export interface Watch {
  readonly subscription: Subscription
}

/**
 * The longest a hold delays a write: a slow model's first token must not keep
 * the run's status and executor (written with the first chunks) waiting.
 */
export const MaxHold = Duration.millis(100)

/** What the writer's queue holds until its next write. */
type Pending = Data.TaggedEnum<{
  Chunk: { readonly seq: number; readonly chunk: Chunk }
  Attach: { readonly statements: ReadonlyArray<Attached> }
  Flush: { readonly done: Deferred.Deferred<void> }
}>
const Pending = Data.taggedEnum<Pending>()

export class EventLog extends Context.Service<EventLog, {
  readonly lastSeq: (runId: RunId) => Effect.Effect<number>
  /**
   * The run's single writer, continuing after the last stored sequence number (`fresh`: a new run,
   * nothing stored yet), fenced by the claim `attempt` when given.
   */
  readonly writer: (
    runId: RunId,
    options?: { readonly fresh?: boolean; readonly attempt?: number }
  ) => Effect.Effect<Writer, never, Scope.Scope>
  /**
   * Stored chunks after `afterSeq`, then live ones, until the run's final end,
   * or a parked turn's end with nothing after it while `settled` holds (a
   * resuming run goes on in the same log).
   */
  readonly follow: (
    runId: RunId,
    afterSeq: number,
    settled: Effect.Effect<boolean>,
    watch?: Watch
  ) => Stream.Stream<SequencedChunk>
  /**
   * Watches for writes before a run exists: a stream that follows a new run
   * with this watch reads nothing back (every chunk of the run comes after it).
   */
  readonly watch: Effect.Effect<Watch, never, Scope.Scope>
  /** Stored chunks after `afterSeq`, without following. */
  readonly read: (runId: RunId, afterSeq: number) => Effect.Effect<ReadonlyArray<SequencedChunk>>
}>()("svc/EventLog") {
  static readonly layer = Layer.effect(EventLog)(
    Effect.gen(function*() {
      const store = yield* EventRepo
      const config = yield* ServiceConfig
      const repo = yield* RunRepo
      const signals = new StreamSignals()
      const recent = new RecentChunks()

      if (Option.isSome(config.databaseUrl)) {
        // Another node wrote: read it. Writes of this node's writers reach local followers directly.
        const notifications = yield* store.notifications
        yield* Effect.forkScoped(
          Effect.forever(
            Effect.flatMap(Queue.take(notifications), (runId) =>
              Effect.sync(() => {
                if (!recent.has(runId)) signals.publish({ runId, chunks: undefined })
              }))
          )
        )
      }

      const read = (runId: RunId, afterSeq: number) => store.read(runId, afterSeq, pageSize)
      const lastSeq = store.lastSeq

      /** One write: the changes to the run's row merged into one update, with the other statements and the chunks. */
      const write = (
        runId: RunId,
        rows: ReadonlyArray<SequencedChunk>,
        all: ReadonlyArray<Attached>,
        now: string,
        attempt: number | undefined
      ) => {
        const changes = all.flatMap((a) => (isRunChange(a) ? [a.change] : []))
        const attached = [
          ...all.filter((a): a is Statement.Fragment => !isRunChange(a)),
          ...(changes.length === 0 ? [] : [repo.statements.change(runId, mergeChanges(changes), now)])
        ]
        return store.write(runId, rows, attached, attempt)
      }

      const writer = Effect.fn("EventLog.writer")(
        function*(runId: RunId, options?: { readonly fresh?: boolean; readonly attempt?: number }) {
          let seq = options?.fresh === true ? 0 : yield* lastSeq(runId)
          const startSeq = seq
          const attempt = options?.attempt
          const pending = yield* Queue.unbounded<Pending>()
          const open = Latch.makeUnsafe(true)
          const writerScope = yield* Effect.scope
          const lost = yield* Deferred.make<void>()
          const lose = Effect.andThen(Deferred.succeed(lost, undefined), Effect.never)
          recent.open(runId, startSeq)
          yield* Effect.addFinalizer(() => Effect.sync(() => recent.close(runId)))
          yield* Effect.forkScoped(
            Effect.forever(
              Effect.gen(function*() {
                const first = yield* Queue.takeAll(pending)
                yield* open.await
                const batch = [...first, ...(yield* Queue.clear(pending))]
                const rows = batch.flatMap((
                  item
                ) => (item._tag === "Chunk" ? [{ seq: item.seq, chunk: item.chunk }] : []))
                const attached = batch.flatMap((item) => (item._tag === "Attach" ? item.statements : []))
                // Fenced out: nothing more is written; waiting flushes are released (and find the claim lost).
                const stored = (yield* Deferred.isDone(lost))
                  ? false
                  : yield* write(runId, rows, attached, attached.length === 0 ? "" : yield* nowIso, attempt).pipe(
                    Effect.as(true),
                    Effect.catchTag("RunFenced", () => Effect.as(Deferred.succeed(lost, undefined), false))
                  )
                if (stored && rows.length > 0) {
                  recent.append(runId, rows)
                  signals.publish({ runId, chunks: rows })
                }
                for (const item of batch) if (item._tag === "Flush") yield* Deferred.succeed(item.done, undefined)
              })
            )
          )
          const attach = (statements: ReadonlyArray<Attached>) => Queue.offer(pending, Pending.Attach({ statements }))
          const drain = Effect.gen(function*() {
            open.openUnsafe()
            const done = yield* Deferred.make<void>()
            yield* Queue.offer(pending, Pending.Flush({ done }))
            yield* Deferred.await(done)
          })
          // Nothing that follows a flush may happen once the claim is lost (a tool call stored "before it fires").
          const flush = Effect.andThen(
            drain,
            Effect.flatMap(Deferred.isDone(lost), (isLost) => (isLost ? lose : Effect.void))
          )
          // Whatever was emitted is stored before the writer goes away (unless fenced out).
          yield* Effect.addFinalizer(() => drain)
          return {
            startSeq,
            attempt,
            lost: Deferred.await(lost),
            isLost: Deferred.isDone(lost),
            lose,
            emit: (emitted: Chunk) =>
              Effect.flatMap(storable(emitted), (chunk) =>
                Effect.suspend(() => {
                  seq += 1
                  const item = Pending.Chunk({ seq, chunk })
                  return Effect.as(Queue.offer(pending, item), item.seq)
                })),
            flush,
            hold: Effect.andThen(
              Effect.sync(() => open.closeUnsafe()),
              Effect.forkIn(Effect.andThen(Effect.sleep(MaxHold), Effect.sync(() => open.openUnsafe())), writerScope)
            ),
            release: Effect.sync(() => open.openUnsafe()),
            attach: (statements) => Effect.asVoid(attach(statements)),
            commit: (statements) => Effect.andThen(attach(statements), flush)
          } satisfies Writer
        }
      )

      const follow = (
        runId: RunId,
        afterSeq: number,
        settled: Effect.Effect<boolean>,
        watch?: Watch
      ): Stream.Stream<SequencedChunk> =>
        Stream.unwrap(
          Effect.gen(function*() {
            // Subscribe before the first look so that no write is missed.
            const subscription = watch === undefined ? yield* signals.subscribe(runId) : watch.subscription
            if (watch !== undefined) signals.bind(watch.subscription, runId)
            /** Chunks after `cursor`: from memory when this node writes the run, else from the table. */
            const catchUp = (cursor: number) =>
              Effect.suspend(() => {
                const local = recent.after(runId, cursor)
                return local === undefined
                  ? Effect.map(read(runId, cursor), (rows) => ({ rows, read: true }))
                  : Effect.succeed({ rows: local, read: false })
              })
            /** `settling`: after a turn's end, an empty look is an answer too (the caller asks whether the run settled). */
            const next = (cursor: number, mustRead: boolean, settling: boolean) =>
              Effect.gen(function*() {
                if (mustRead) {
                  const caught = yield* catchUp(cursor)
                  if (caught.rows.length > 0 || caught.read || settling) return caught
                }
                while (true) {
                  // A watch heard every run until it was bound to this one.
                  const mine = (yield* Queue.takeAll(subscription.queue)).filter((signal) => signal.runId === runId)
                  if (mine.length === 0) continue
                  if (mine.some((signal) => signal.chunks === undefined)) return yield* catchUp(cursor)
                  const fresh = mine.flatMap((signal) => signal.chunks ?? []).filter((c) => c.seq > cursor)
                  if (fresh.length === 0) continue
                  const contiguous = fresh.every((c, i) => c.seq === cursor + 1 + i)
                  return contiguous ? { rows: fresh, read: false } : yield* catchUp(cursor)
                }
              })
            return Stream.paginate({ cursor: afterSeq, mustRead: watch === undefined, endIfEmpty: false }, (state) =>
              Effect.gen(function*() {
                const { rows, read: wasRead } = yield* next(state.cursor, state.mustRead, state.endIfEmpty)
                if (rows.length === 0) {
                  return state.endIfEmpty && (yield* settled)
                    ? [[], Option.none()] as const
                    : [
                      [],
                      Option.some({ cursor: state.cursor, mustRead: false, endIfEmpty: state.endIfEmpty })
                    ] as const
                }
                const last = rows[rows.length - 1]
                // The run's final end: nothing can follow.
                if (isFinalEnd(last.chunk)) {
                  return [rows, Option.none()] as const
                }
                // A parked turn's end: a resumed run goes on in the same log, so look once more.
                if (isStreamEnd(last.chunk)) {
                  return [rows, Option.some({ cursor: last.seq, mustRead: true, endIfEmpty: true })] as const
                }
                // A full page read from the table may have more behind it.
                const more = wasRead && rows.length === pageSize
                return [rows, Option.some({ cursor: last.seq, mustRead: more, endIfEmpty: false })] as const
              }))
          })
        ).pipe(Stream.scoped)

      const watch = Effect.map(signals.subscribe(undefined), (subscription): Watch => ({ subscription }))

      return { lastSeq, writer, follow, read, watch }
    })
  )
}

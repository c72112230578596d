/**
 * The thread's cached context prefix (spec 2.2): a thread's durable context is
 * cached and deferred. A run reuses the thread context its previous turn was
 * built with, so the prompt prefix a provider caches stays byte-identical from
 * turn to turn; an edit of the thread's context folds in at the next rebuild.
 * A rebuild happens when the thread has no earlier turn, when `forceRefresh`
 * was sent after the previous turn started, when the band changes, or when the
 * thread went cold (idle for the warm duration, spec 8: the provider's cache is
 * gone anyway). The agent's context is not deferred (spec 4.1 rule 5).
 */
import type { Band } from "../../domain/Band.ts"

/** Thread warm duration (spec 8: about 60 seconds idle). */
export const WarmMs = 60_000

/** What the thread's previous turn was built with. */
export interface PreviousTurn {
  /** The thread blocks frozen into that run; absent for runs stored before it was recorded. */
  readonly threadContext: ReadonlyArray<string> | undefined
  readonly band: Band
  readonly createdAt: string
  readonly completedAt: string | null
}

export interface PrefixInput {
  /** The thread's context now. */
  readonly current: ReadonlyArray<string>
  /** The band of the run being started. */
  readonly band: Band
  /** When a PATCH last asked for forceRefresh (ISO), or null. */
  readonly refreshRequestedAt: string | null
  readonly previous: PreviousTurn | null
  readonly nowMs: number
}

/** The thread context the new run uses. */
export const threadContextFor = (input: PrefixInput): ReadonlyArray<string> => {
  const previous = input.previous
  if (previous === null || previous.threadContext === undefined || previous.completedAt === null) return input.current
  if (previous.band !== input.band) return input.current
  if (input.refreshRequestedAt !== null && input.refreshRequestedAt >= previous.createdAt) return input.current
  if (input.nowMs - Date.parse(previous.completedAt) >= WarmMs) return input.current
  return previous.threadContext
}

/**
 * Who is told that a run's stream grew. Each follower waits on a queue of its
 * own, registered under the run it follows, so a write wakes the followers of
 * that run and no other: a node holding thousands of open streams does not
 * wake them all for every write. A watch taken before its run exists (a
 * message answered with the stream of the run it starts) hears every run
 * until it is bound to its own.
 */
import { Effect, Queue, type Scope } from "effect"
import type { SequencedChunk } from "../../domain/Chunk.ts"

/** A run's log grew: with the chunks when written on this node. */
export interface Signal {
  readonly runId: string
  readonly chunks: ReadonlyArray<SequencedChunk> | undefined
}

export interface Subscription {
  readonly queue: Queue.Queue<Signal>
  /** The run it hears; undefined: every run (a watch not yet bound). */
  runId: string | undefined
}

export class StreamSignals {
  private readonly byRun = new Map<string, Set<Subscription>>()
  private readonly unbound = new Set<Subscription>()

  publish(signal: Signal): void {
    const followers = this.byRun.get(signal.runId)
    if (followers !== undefined) { for (const s of followers) Queue.offerUnsafe(s.queue, signal) }
    for (const s of this.unbound) Queue.offerUnsafe(s.queue, signal)
  }

  /** Hears `runId` (every run while undefined, until `bind`) until the scope closes. */
  subscribe(runId: string | undefined): Effect.Effect<Subscription, never, Scope.Scope> {
    return Effect.acquireRelease(
      Effect.map(Queue.unbounded<Signal>(), (queue) => {
        const subscription: Subscription = { queue, runId: undefined }
        this.attach(subscription, runId)
        return subscription
      }),
      (subscription) => Effect.sync(() => this.detach(subscription))
    )
  }

  /** From now on the subscription hears `runId` only (what it heard before stays queued). */
  bind(subscription: Subscription, runId: string): void {
    if (subscription.runId === runId) return
    this.detach(subscription)
    this.attach(subscription, runId)
  }

  /** Runs with at least one follower, and subscriptions hearing every run (for tests). */
  get size(): { readonly runs: number; readonly unbound: number } {
    return { runs: this.byRun.size, unbound: this.unbound.size }
  }

  private attach(subscription: Subscription, runId: string | undefined): void {
    subscription.runId = runId
    if (runId === undefined) {
      this.unbound.add(subscription)
      return
    }
    const followers = this.byRun.get(runId)
    if (followers === undefined) this.byRun.set(runId, new Set([subscription]))
    else followers.add(subscription)
  }

  private detach(subscription: Subscription): void {
    const { runId } = subscription
    if (runId === undefined) {
      this.unbound.delete(subscription)
      return
    }
    const followers = this.byRun.get(runId)
    followers?.delete(subscription)
    if (followers?.size === 0) this.byRun.delete(runId)
  }
}

/**
 * Runs this process created and has not executed yet: the first execution of
 * a run created here takes its row from memory instead of reading it back.
 * Only the Start that follows the creation takes it (RunEntity's `created`):
 * a run whose entity lives on another runner executes there, and a later
 * Start here (the run's shard moved) must read the run, which has moved on.
 * Such a later Start drops the entry; entries are bounded so the others do not
 * pile up.
 */
import { Option } from "effect"

const maxKept = 1024

export class FreshRuns<A> {
  private readonly entries = new Map<string, A>()

  put(id: string, value: A): void {
    this.entries.set(id, value)
    if (this.entries.size > maxKept) {
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.entries.delete(oldest.value)
    }
  }

  /** Once: a second execution (a redelivered Start, a resume) reads the run afresh. */
  take(id: string): Option.Option<A> {
    const value = this.entries.get(id)
    if (value === undefined) return Option.none()
    this.entries.delete(id)
    return Option.some(value)
  }

  drop(id: string): void {
    this.entries.delete(id)
  }
}

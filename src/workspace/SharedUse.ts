/**
 * One use of a thread's workspace on this node, shared by every run that
 * uses it at the same time (a root and its workers, spec 1.2): the first to
 * come opens it (restore or seed, the egress proxy, the sandbox), the others
 * join that open, and the last to leave closes it (its snapshot, the proxy).
 * Two opens side by side would each start a proxy on the workspace's one
 * socket (the later one taking it from the earlier), and a snapshot taken
 * while another run still writes would archive a tree being changed.
 *
 * Opening and leaving are serialized per key, so a run never joins an open
 * that is closing, and never opens while one is still closing. The open's
 * finalizers read `last()`: whoever left last, so a snapshot's problem is
 * told to the run that was still there (RcMap, the library's shared resource
 * by key, keeps the first caller's lookup and has no notion of who leaves).
 */
import { Effect, Exit, Scope, Semaphore } from "effect"

interface Entry<A, Who> {
  users: number
  /** Who left last (the open's finalizers read it). */
  readonly left: { last: Who }
  readonly value: A
  readonly scope: Scope.Closeable
}

export interface SharedUse<A, E, Who> {
  /**
   * The shared open of `key` for as long as the caller's scope: `open` (given who left last) runs when
   * nobody uses it yet, in a scope of its own that closes when the last user's does.
   */
  readonly use: (key: string, who: Who, open: (last: () => Who) => Effect.Effect<A, E, Scope.Scope>) => Effect.Effect<
    A,
    E,
    Scope.Scope
  >
}

export const make = <A, E, Who>(): SharedUse<A, E, Who> => {
  const entries = new Map<string, Entry<A, Who>>()
  const locks = new Map<string, Semaphore.Semaphore>()
  const lockOf = (key: string) => {
    const found = locks.get(key)
    if (found !== undefined) return found
    const made = Semaphore.makeUnsafe(1)
    locks.set(key, made)
    return made
  }

  const join = (key: string, who: Who, open: (last: () => Who) => Effect.Effect<A, E, Scope.Scope>) =>
    lockOf(key).withPermits(1)(Effect.suspend(() => {
      const found = entries.get(key)
      if (found !== undefined) {
        found.users += 1
        return Effect.succeed(found)
      }
      return Effect.flatMap(Scope.make(), (scope) => {
        const left = { last: who }
        return open(() => left.last).pipe(
          Scope.provide(scope),
          // A failed or interrupted open closes what it had opened, with its own user as the one left.
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit))),
          Effect.map((value) => {
            const entry: Entry<A, Who> = { users: 1, left, value, scope }
            entries.set(key, entry)
            return entry
          })
        )
      })
    }))

  const leave = (key: string, who: Who, entry: Entry<A, Who>) =>
    lockOf(key).withPermits(1)(Effect.suspend(() => {
      entry.left.last = who
      entry.users -= 1
      if (entry.users > 0) return Effect.void
      entries.delete(key)
      return Scope.close(entry.scope, Exit.void)
    }))

  return {
    use: (key, who, open) =>
      Effect.map(
        // Interruptible: an open may clone a seed; a run cancelled meanwhile does not wait for it.
        Effect.acquireRelease(join(key, who, open), (entry) => leave(key, who, entry), { interruptible: true }),
        (entry) => entry.value
      )
  }
}

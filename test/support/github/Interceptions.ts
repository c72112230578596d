/**
 * Requests of the fake GitHub that a test takes in hand, named by method and
 * path (`POST /api/v3/repos/o/r/issues`), each once:
 *
 * - a hold: the request is accepted and either applied (GitHub's side of it
 *   happens: the comment exists) or not, and its answer is withheld until the
 *   test releases it. A test kills a service between dispatch and settlement
 *   this way, deterministically: `arrived` says the write is in GitHub's hands.
 *   A released request whose client went away meanwhile is neither applied
 *   nor answered.
 * - a fault: the request is answered with a failure of the test's making,
 *   built from what it carried (to check that a credential GitHub echoes
 *   back never reaches a log, an error or a tool result).
 */
import { Deferred, Effect } from "effect"

export interface Hold {
  /** Completes when the request arrived (and, when applied, GitHub's side of it happened). */
  readonly arrived: Effect.Effect<void>
  /** Lets the request go on: applied now if it was not, then answered (when its client is still there). */
  readonly release: Effect.Effect<void>
}

/** What a faulted request carried: the credential of its Authorization header, its JSON body. */
export interface Faulted {
  readonly credential: string | undefined
  readonly body: Readonly<Record<string, unknown>>
}

export interface FaultAnswer {
  readonly status: number
  readonly body: unknown
  readonly headers?: Record<string, string>
}

interface Held {
  readonly apply: boolean
  readonly arrived: Deferred.Deferred<void>
  readonly released: Deferred.Deferred<void>
}

export class Interceptions {
  private readonly holds = new Map<string, Held>()
  private readonly faults = new Map<string, (request: Faulted) => FaultAnswer>()

  hold(method: string, path: string, options: { readonly apply: boolean }): Hold {
    const held: Held = {
      apply: options.apply,
      arrived: Deferred.makeUnsafe<void>(),
      released: Deferred.makeUnsafe<void>()
    }
    this.holds.set(`${method} ${path}`, held)
    return { arrived: Deferred.await(held.arrived), release: Effect.asVoid(Deferred.succeed(held.released, undefined)) }
  }

  fault(method: string, path: string, answer: (request: Faulted) => FaultAnswer): void {
    this.faults.set(`${method} ${path}`, answer)
  }

  /** The fault for this request, taken (once). */
  takeFault(method: string, path: string): ((request: Faulted) => FaultAnswer) | undefined {
    const key = `${method} ${path}`
    const fault = this.faults.get(key)
    this.faults.delete(key)
    return fault
  }

  /**
   * Runs `apply` (GitHub's side of the request) under the hold of this request, if any:
   * before the wait when the hold applies it, after the release otherwise. Answers what
   * `apply` answered, or undefined when the client left while the request was held.
   */
  async around<A>(method: string, path: string, gone: () => boolean, apply: () => A): Promise<A | undefined> {
    const key = `${method} ${path}`
    const held = this.holds.get(key)
    if (held === undefined) return apply()
    this.holds.delete(key)
    const applied = held.apply ? apply() : undefined
    Deferred.doneUnsafe(held.arrived, Effect.void)
    await Effect.runPromise(Deferred.await(held.released))
    if (gone()) return undefined
    return held.apply ? applied : apply()
  }
}

/**
 * The chaos: every `killEveryMs` (± half of it) a random runner that is up is
 * killed with SIGKILL (never the last one up), and started again
 * `restartAfterMs` later on the same ports. Every kill, restart and rejoin is an
 * event the assertions may cite (a tool call repeated because a kill or a
 * shard hand-off cut its step short).
 */
import { Effect, Fiber } from "effect"
import type { Cluster, Kill } from "./Cluster.ts"

export interface ChaosEvent {
  readonly kind: "kill" | "restart" | "rejoin"
  readonly runner: number
  /**
   * Epoch ms: the process exited (kill), the new process was launched (restart), or it listens
   * (rejoin: the other runners hand it its shards back, interrupting what they executed there).
   */
  readonly at: number
}

export interface Chaos {
  readonly kills: () => ReadonlyArray<Kill>
  readonly events: () => ReadonlyArray<ChaosEvent>
  /** Stops killing and waits until every runner is up again. */
  readonly stop: Effect.Effect<void>
  readonly failures: () => ReadonlyArray<string>
}

export interface ChaosOptions {
  readonly killEveryMs: number
  readonly restartAfterMs: number
  /** At most this many kills. */
  readonly maxKills: number
}

export const unleash = (cluster: Cluster, options: ChaosOptions): Effect.Effect<Chaos> =>
  Effect.gen(function*() {
    const kills: Array<Kill> = []
    const events: Array<ChaosEvent> = []
    const failures: Array<string> = []
    const restarts: Array<Fiber.Fiber<void>> = []
    const restart = (index: number) =>
      Effect.gen(function*() {
        yield* Effect.sleep(options.restartAfterMs)
        events.push({ kind: "restart", runner: index, at: Date.now() })
        yield* cluster.restart(index).pipe(
          Effect.andThen(Effect.sync(() => events.push({ kind: "rejoin", runner: index, at: Date.now() }))),
          Effect.catchCause((cause) => Effect.sync(() => failures.push(`restart of runner ${index}: ${String(cause)}`)))
        )
      })
    const loop = Effect.gen(function*() {
      while (kills.length < options.maxKills) {
        yield* Effect.sleep(Math.round(options.killEveryMs * (0.5 + Math.random())))
        const up = cluster.runners.filter((r) => r.alive)
        if (up.length < 2) continue
        const victim = up[Math.floor(Math.random() * up.length)]
        const kill = yield* cluster.kill(victim.index)
        kills.push(kill)
        events.push({ kind: "kill", runner: victim.index, at: kill.at })
        restarts.push(yield* Effect.forkDetach(restart(victim.index)))
      }
    })
    const fiber = yield* Effect.forkDetach(loop)
    return {
      kills: () => kills,
      events: () => events,
      failures: () => failures,
      stop: Effect.gen(function*() {
        yield* Fiber.interrupt(fiber)
        yield* Fiber.joinAll(restarts)
      })
    } satisfies Chaos
  })

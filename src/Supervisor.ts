/**
 * SVC_PROCESSES > 1: the started process supervises that many service
 * processes (node:cluster workers) and serves nothing itself.
 *
 * - The workers share PORT: the primary holds the listening socket and hands
 *   connections to the workers in turn (node:cluster round-robin), so clients
 *   see one port. Worker i is a cluster runner on SVC_RUNNER_PORT + i; the
 *   runners find each other in PostgreSQL. Its managed workspaces live under
 *   SVC_WORKSPACE_ROOT/worker-i (a workspace root belongs to one process).
 * - The supervisor never opens the database. Every worker runs the migrations
 *   at start: effect/sql's Migrator locks its table (ours and the cluster's)
 *   for the whole run, so workers starting together apply them once and the
 *   others wait and find nothing left to do; seeding SVC_API_KEYS is an
 *   upsert; a development key is only minted on embedded storage (one process).
 * - A worker that exits before it ever served stops the service, as a single
 *   process failing at start would (its own message says why). One that exits
 *   later is started again after 1 s, doubling up to 30 s while restarts fail
 *   within a minute; after five such failures in a row the service stops.
 * - SIGTERM / SIGINT: every worker gets SIGTERM and stops gracefully (see
 *   http/Listener.ts; SIGKILL if it still runs 20 s after SVC_SHUTDOWN_GRACE_MS)
 *   and the supervisor exits once they all have.
 */
import { Clock, Config, Data, Duration, Effect, Option } from "effect"
import cluster, { type Worker } from "node:cluster"
import { join } from "node:path"
import type { ServiceConfigShape } from "./config/ServiceConfig.ts"

export class SupervisorError extends Data.TaggedError("SupervisorError")<{ readonly message: string }> {}

/** Set by the supervisor on each worker: its index (0-based), which log lines carry. */
const WorkerIndexVariable = "SVC_WORKER_INDEX"

/** A restarted worker that lived this long (and served) was healthy: its failures are forgotten. */
const StableMs = 60_000
const FirstBackoffMs = 1_000
const MaxBackoffMs = 30_000
/** Failed restarts in a row before the supervisor gives up. */
const MaxFailures = 5
/** How long a worker may take to stop on SIGTERM beyond its grace period (closing the cluster runner) before it is killed. */
const StopMarginMs = 20_000

/** This process supervises rather than serves. */
export const isSupervisor = (config: ServiceConfigShape): boolean => config.processes > 1 && cluster.isPrimary

interface Running {
  readonly worker: Worker
  readonly pid: number
  /** The worker listens on PORT, so it has built everything and serves. */
  served: boolean
  readonly exited: Promise<{ readonly code: number | null; readonly signal: string | null }>
}

const fork = (index: number, config: ServiceConfigShape) =>
  Effect.sync((): Running => {
    const worker = cluster.fork({
      [WorkerIndexVariable]: String(index),
      SVC_RUNNER_PORT: String(config.runnerPort + index),
      // Each worker is a node of the cluster, with workspaces of its own on disk (their snapshots move between nodes).
      SVC_WORKSPACE_ROOT: join(config.workspaceRoot, `worker-${index}`)
    })
    const running: Running = {
      worker,
      pid: worker.process.pid ?? 0,
      served: false,
      exited: new Promise((resolve) =>
        worker.once("exit", (code: number | null, signal: string | null) => resolve({ code, signal }))
      )
    }
    worker.on("listening", (address) => {
      if (address.port === config.port) running.served = true
    })
    // A failed signal or IPC send; what matters (an exit) is reported by `exit`.
    worker.on("error", () => {})
    return running
  })

/** SIGTERM, then SIGKILL if it is still running after the grace period and StopMarginMs; done when it has exited. */
const stop = (running: Running, config: ServiceConfigShape) =>
  Effect.suspend(() => {
    if (running.worker.isDead()) return Effect.void
    running.worker.process.kill("SIGTERM")
    return Effect.promise(() => running.exited).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(config.shutdownGraceMs + StopMarginMs),
        orElse: () =>
          Effect.andThen(
            Effect.sync(() => running.worker.process.kill("SIGKILL")),
            Effect.promise(() => running.exited)
          )
      }),
      Effect.asVoid
    )
  })

const describeExit = (exit: { readonly code: number | null; readonly signal: string | null }) =>
  exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`

/** One worker slot: runs worker `index` and restarts it until it fails for good (or the slot is interrupted). */
const slot = (index: number, config: ServiceConfigShape) =>
  Effect.gen(function*() {
    let everServed = false
    let failures = 0
    while (true) {
      const startedAt = yield* Clock.currentTimeMillis
      const ended = yield* Effect.acquireUseRelease(
        fork(index, config),
        (running) =>
          Effect.log(`worker ${index} started (pid ${running.pid}, cluster runner port ${config.runnerPort + index})`)
            .pipe(
              Effect.andThen(Effect.promise(() => running.exited)),
              Effect.map((exit) => ({ how: describeExit(exit), pid: running.pid, served: running.served }))
            ),
        (running) => stop(running, config)
      )
      const livedMs = (yield* Clock.currentTimeMillis) - startedAt
      if (!ended.served && !everServed) {
        return yield* new SupervisorError({
          message: `worker ${index} (pid ${ended.pid}) ${ended.how} before it started serving`
        })
      }
      everServed = true
      failures = ended.served && livedMs >= StableMs ? 1 : failures + 1
      if (failures > MaxFailures) {
        return yield* new SupervisorError({
          message: `worker ${index} (pid ${ended.pid}) ${ended.how}, its ${failures}th failure in a row: giving up`
        })
      }
      const backoffMs = Math.min(MaxBackoffMs, FirstBackoffMs * 2 ** (failures - 1))
      yield* Effect.logWarning(`worker ${index} (pid ${ended.pid}) ${ended.how}; starting it again in ${backoffMs} ms`)
      yield* Effect.sleep(Duration.millis(backoffMs))
    }
  })

/**
 * Runs `config.processes` workers until interrupted (SIGTERM / SIGINT through
 * NodeRuntime.runMain), then stops them all; fails when a worker cannot be kept running.
 */
export const supervise = (config: ServiceConfigShape): Effect.Effect<void, SupervisorError> =>
  Effect.log(
    `Supervising ${config.processes} service processes on port ${config.port} ` +
      `(cluster runner ports ${config.runnerPort}-${config.runnerPort + config.processes - 1})`
  ).pipe(
    Effect.andThen(
      Effect.forEach(Array.from({ length: config.processes }, (_, i) => i), (i) => slot(i, config), {
        concurrency: "unbounded",
        discard: true
      })
    )
  )

/** In a worker, every log line of `effect` carries `worker: <index>`: several processes share one output. */
export const annotateWorker = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  cluster.isWorker
    ? Effect.flatMap(Config.String(WorkerIndexVariable).pipe(Config.option, Effect.orDie), (index) =>
      Option.match(index, {
        onNone: () =>
          effect,
        onSome: (worker) => Effect.annotateLogs(effect, { worker })
      }))
    : effect

/**
 * The processes of a deployment: each beats every second (the database's own
 * clock, so runner clocks need not agree). A process is dead when its database
 * sessions are gone (it crashed or was killed: its runs are dispatched again at
 * the next recovery pass) or when it has been silent for 4 s (its host or its
 * network is gone, or it is frozen). A live process taken for dead is fenced
 * out of its runs by their next execution (migration 0020_fencing).
 */
import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import { ServiceConfig, type ServiceConfigShape } from "../config/ServiceConfig.ts"
import { NodeId } from "../NodeId.ts"

/** A process that has not beaten for this long is taken for dead. */
export const NodeDeadAfterMs = 4_000

/**
 * The processes alive now: a heartbeat within `deadAfterMs`, and (`sessions`, on PostgreSQL) a
 * database session left (each process's sessions carry its node id as application_name,
 * Database.layerUrl): a killed process is dead at once. A subquery for `... NOT IN (...)`.
 */
export const liveNodeIds = (sql: PgClient.PgClient, deadAfterMs: number, sessions: boolean) =>
  sql`SELECT id FROM svc_nodes WHERE heartbeat_at > now() - make_interval(secs => ${deadAfterMs / 1000})
    ${sessions ? sql`AND id IN (SELECT application_name FROM pg_stat_activity)` : sql``}`
const beat = Duration.seconds(1)

/**
 * The address this process serves the cluster on, as the cluster's runner table spells it
 * (`host:port`): none for a client-role process or the embedded single runner.
 */
export const runnerAddressOf = (config: ServiceConfigShape): string | null =>
  Option.isSome(config.databaseUrl) && config.clusterRole === "runner"
    ? `${config.runnerHost}:${config.runnerPort}`
    : null

/** Real time always: liveness is judged by the database's clock, never a test's. */
const realClock = Clock.Clock.defaultValue()

export class NodeRepo extends Context.Service<NodeRepo, {
  /** This process (the `executor` it writes on the runs it executes). */
  readonly id: string
}>()("svc/NodeRepo") {
  static readonly layer = Layer.effect(NodeRepo)(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const id = yield* NodeId
      const runnerAddress = runnerAddressOf(yield* ServiceConfig)
      const heartbeat =
        sql`INSERT INTO svc_nodes (id, started_at, heartbeat_at, runner_address) VALUES (${id}, now(), now(), ${runnerAddress})
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`.pipe(Effect.orDie)
      yield* heartbeat
      yield* Effect.forkScoped(
        Effect.repeat(heartbeat, Schedule.spaced(beat)).pipe(
          Effect.catchCause((cause) => Effect.logWarning("node heartbeat failed", cause)),
          Effect.provideService(Clock.Clock, realClock)
        )
      )
      // A process that stops cleanly is gone at once; one killed is gone when its heartbeat ages.
      yield* Effect.addFinalizer(() =>
        sql`DELETE FROM svc_nodes WHERE id = ${id}`.pipe(
          Effect.ignore({ log: "Debug", message: "this node's row not removed on stop; it ages out instead" })
        )
      )
      // Old rows of dead processes: kept an hour for diagnosis, then dropped.
      yield* sql`DELETE FROM svc_nodes WHERE heartbeat_at < now() - interval '1 hour'`.pipe(Effect.orDie)
      return { id }
    })
  )
}

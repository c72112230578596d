/**
 * Takes a killed runner out of the cluster at once. The cluster finds a dead
 * runner by its health check (a connection attempt every 500 ms), but that
 * check is a singleton: when the runner that dies is the one hosting it,
 * nothing notices until the dead runner's heartbeat in the runner table is a
 * shard-lock expiry old (3 s), and every failover waits for that. Here each
 * process (runner or client) looks every 500 ms for registered runners whose
 * process's database sessions are all gone (each session carries its node id
 * as `application_name`, and a killed process's sessions end with it) and
 * marks them unhealthy; every runner then reassigns their shards at its next
 * assignment read (500 ms), and the shards' advisory locks went with the dead
 * sessions, so singletons and entities start elsewhere without waiting.
 *
 * A runner is marked only when no live process claims its address (a
 * replacement on the same address is never marked) and its runner heartbeat is
 * no newer than its process's last beat plus 1.5 s (a replacement that has
 * registered in the cluster but not yet in `svc_nodes` is never marked). A
 * live runner marked by mistake (its sessions all dropped at once) is marked
 * healthy again by the cluster's health check, which reaches it.
 */
import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Layer, Option, Schedule } from "effect"
import { ServiceConfig } from "../config/ServiceConfig.ts"

export const DeadRunnerCheckInterval = Duration.millis(500)

/** Marks the runners of processes with no database session left unhealthy; their addresses. */
export const markDeadRunners = (sql: PgClient.PgClient) =>
  sql<{ address: string }>`UPDATE cluster_runners r SET healthy = false
    WHERE r.healthy
      AND EXISTS (SELECT 1 FROM svc_nodes n
        WHERE n.runner_address = r.address
          AND r.last_heartbeat <= n.heartbeat_at + interval '1500 milliseconds'
          AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name = n.id))
      AND NOT EXISTS (SELECT 1 FROM svc_nodes n
        WHERE n.runner_address = r.address AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name = n.id))
    RETURNING r.address`.pipe(Effect.map((rows) => rows.map((r) => r.address)))

/** The check, on the real clock, in every process on PostgreSQL (the embedded database has one runner). */
export const layer = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* ServiceConfig
    if (Option.isNone(config.databaseUrl)) return
    const sql = yield* PgClient.PgClient
    const check = markDeadRunners(sql).pipe(
      Effect.flatMap((addresses) =>
        addresses.length === 0 ?
          Effect.void :
          Effect.logWarning("runner taken out of the cluster: its process is gone").pipe(
            Effect.annotateLogs({ runners: addresses.join(",") })
          )
      ),
      Effect.catchCause((cause) => Effect.logWarning("dead-runner check failed", cause))
    )
    yield* Effect.forkScoped(
      Effect.repeat(check, Schedule.spaced(DeadRunnerCheckInterval)).pipe(
        Effect.provideService(Clock.Clock, Clock.Clock.defaultValue())
      )
    )
  })
)

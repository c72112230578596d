/**
 * The process is a cluster runner. Embedded storage: a single runner with
 * in-memory runner storage (PGlite has one connection, and SQL runner storage
 * reserves one for its locks). With DATABASE_URL: a socket runner whose shards
 * and locks live in PostgreSQL; start more processes with distinct
 * SVC_RUNNER_PORT values to scale out. SVC_CLUSTER_ROLE=client makes a process
 * serve the API only: it hosts no entities and sends every message to runners.
 * The runner port binds SVC_RUNNER_LISTEN_HOST (default SVC_RUNNER_HOST, not
 * every interface): its protocol has no authentication, so it belongs on a
 * private network; SVC_RUNNER_TLS_* put runner traffic on mutual TLS (RunnerTls).
 */
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { Clock, Effect, Layer, Option } from "effect"
import { type MessageStorage, RunnerAddress, type Runners, type Sharding, SingleRunner } from "effect/cluster"
import type { SqlClient } from "effect/sql"
import { ConfigurationError } from "../config/ConfigurationError.ts"
import { ServiceConfig, type ServiceConfigShape } from "../config/ServiceConfig.ts"
import * as RunnerTls from "./RunnerTls.ts"

/**
 * A message to an entity on this runner is handed over as it is. Effect's default encodes and
 * decodes it as if it crossed the network (a check for tests of entities); here every message
 * goes through the same schemas when it does cross to another runner (the multi-process and chaos
 * tests), and the local copy cost a schema round trip per hop on every turn.
 */
const localMessages = { simulateRemoteSerialization: false } as const

/**
 * Failover settings (README "Chaos and failover", measured by `npm run chaos`). A dead runner
 * is found by the health check (a connection attempt every 500 ms) or, when it hosted the health
 * check itself, once its shard-lock heartbeat is 3 s old; its shards' advisory locks went with its
 * database session, and the others read the new assignments every 500 ms. The price: each runner
 * refreshes its locks once a second and reads the assignments twice a second, and a runner whose
 * lock refresh takes over a second (a long GC pause, a starved CPU, a stalled database) drops its
 * shards; its runs go on elsewhere and the frozen execution is fenced out (migration 0020_fencing).
 */
const fastFailover = {
  shardLockExpiration: "3 seconds",
  shardLockRefreshInterval: "1 second",
  refreshAssignmentsInterval: "500 millis",
  runnerHealthCheckInterval: "500 millis",
  entityMessagePollInterval: "1 second",
  ...localMessages
} as const

/**
 * The cluster's own timers (shard locks, health checks, message polling) run
 * on the real clock, always: shard locks are compared with the database's
 * time, so a virtual clock would expire them. Entity handlers keep their own
 * clock (see RunEntityLive).
 */
const realClock = Layer.succeed(Clock.Clock)(Clock.Clock.defaultValue())

/** Where other runners reach this one, and the address its port binds. */
const runnerAddresses = (config: ServiceConfigShape) => ({
  runnerAddress: Option.some(RunnerAddress.make(config.runnerHost, config.runnerPort)),
  runnerListenAddress: Option.some(RunnerAddress.make(config.runnerListenHost, config.runnerPort)),
  ...fastFailover
})

export const layer: Layer.Layer<
  Sharding.Sharding | Runners.Runners | MessageStorage.MessageStorage,
  ConfigurationError,
  ServiceConfig | SqlClient.SqlClient
> = Layer.unwrap(
  Effect.map(ServiceConfig, (config) =>
    Option.isNone(config.databaseUrl) && config.clusterRole === "client"
      ? Layer.unwrap(
        Effect.fail(
          new ConfigurationError({
            message: "SVC_CLUSTER_ROLE=client needs DATABASE_URL: an embedded install is a single runner."
          })
        )
      )
      : Option.isNone(config.databaseUrl)
      ? SingleRunner.layer({ runnerStorage: "memory", shardingConfig: localMessages }).pipe(
        Layer.provide([NodeCrypto.layerDigest, realClock]),
        Layer.orDie
      )
      : Option.isSome(config.runnerTls)
      ? RunnerTls.layer(config.runnerTls.value, {
        clientOnly: config.clusterRole === "client",
        shardingConfig: config.clusterRole === "client" ? fastFailover : runnerAddresses(config)
      }).pipe(Layer.provide(realClock))
      : config.clusterRole === "client"
      ? NodeClusterSocket.layer({ storage: "sql", clientOnly: true, shardingConfig: fastFailover }).pipe(
        Layer.provide([NodeCrypto.layerDigest, realClock]),
        Layer.orDie
      )
      : NodeClusterSocket.layer({ storage: "sql", shardingConfig: runnerAddresses(config) }).pipe(
        Layer.provide([NodeCrypto.layerDigest, realClock]),
        Layer.orDie
      ))
)

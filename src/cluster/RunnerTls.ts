/**
 * Runner-to-runner traffic over mutual TLS (SVC_RUNNER_TLS_CERT / _KEY / _CA).
 *
 * The cluster's socket protocol has no authentication of its own: whoever
 * reaches a runner port can send entity messages. With these files, the
 * runner port is a TLS server that requires a client certificate signed by
 * the CA, and every connection to another runner presents this process's
 * certificate and accepts only a peer the CA signed. Any certificate of that
 * CA is a member of the cluster (host names are not checked: runner
 * addresses are often bare IPs), so use a CA dedicated to the cluster.
 *
 * Built from effect's own parts, as NodeClusterSocket.layer builds the plain
 * TCP transport: SocketRunner over a TLS `SocketServer` and a TLS
 * `RpcClientProtocol`, with SQL runner and message storage.
 */
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { Effect, Layer, Option } from "effect"
import {
  RunnerHealth,
  Runners,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "effect/cluster"
import { RpcClient, RpcSerialization } from "effect/rpc"
import { Socket } from "effect/socket"
import { readFileSync } from "node:fs"
import { ConfigurationError } from "../config/ConfigurationError.ts"
import type { RunnerTlsFiles } from "../config/ServiceConfig.ts"

interface Credentials {
  readonly cert: string
  readonly key: string
  readonly ca: string
}

const readCredentials = (files: RunnerTlsFiles) =>
  Effect.try({
    try: (): Credentials => ({
      cert: readFileSync(files.cert, "utf8"),
      key: readFileSync(files.key, "utf8"),
      ca: readFileSync(files.ca, "utf8")
    }),
    catch: (cause) =>
      new ConfigurationError({ message: `runner TLS files: ${cause instanceof Error ? cause.message : String(cause)}` })
  })

/** The runner port: a TLS server that refuses connections without a certificate the CA signed. */
const socketServer = (credentials: Credentials) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const config = yield* ShardingConfig.ShardingConfig
      const address = Option.orElse(config.runnerListenAddress, () => config.runnerAddress)
      if (Option.isNone(address)) return yield* Effect.die("RunnerTls: no runner listen address")
      return NodeSocketServer.layerTls({
        ...credentials,
        host: address.value.host,
        port: address.value.port,
        requestCert: true,
        rejectUnauthorized: true
      })
    })
  )

/** Connections to other runners: this process's certificate, and a peer the CA signed. */
const clientProtocol = (credentials: Credentials) =>
  Layer.effect(Runners.RpcClientProtocol)(
    Effect.gen(function*() {
      const serialization = yield* RpcSerialization.RpcSerialization
      return {
        codecFor: serialization.codecFor,
        make: Effect.fnUntraced(function*(address) {
          const socket = yield* NodeSocket.makeTls({
            ...credentials,
            host: address.host,
            port: address.port,
            openTimeout: 1000,
            timeout: 5500,
            rejectUnauthorized: true,
            checkServerIdentity: () => undefined
          })
          return yield* RpcClient.makeProtocolSocket().pipe(
            Effect.provideService(Socket.Socket, socket),
            Effect.provideService(RpcSerialization.RpcSerialization, serialization)
          )
        }, Effect.orDie)
      }
    })
  )

/** The sharding layer over mutual TLS, as a runner or (`clientOnly`) a node that hosts no entities. */
export const layer = (
  files: RunnerTlsFiles,
  options: { readonly clientOnly: boolean; readonly shardingConfig: Partial<ShardingConfig.ShardingConfig["Service"]> }
) =>
  Layer.unwrap(
    Effect.map(readCredentials(files), (credentials) => {
      const protocol = clientProtocol(credentials)
      const transport = options.clientOnly
        ? SocketRunner.layerClientOnly.pipe(Layer.provide(protocol))
        : SocketRunner.layer.pipe(
          Layer.provide([socketServer(credentials), protocol]),
          Layer.provide(RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(protocol)))
        )
      return transport.pipe(
        Layer.provideMerge(SqlMessageStorage.layer.pipe(Layer.provide(NodeCrypto.layerDigest))),
        Layer.provide(Layer.orDie(SqlRunnerStorage.layer)),
        Layer.provide(ShardingConfig.layerFromEnv(options.shardingConfig)),
        Layer.provide(RpcSerialization.layerSchemaBinary()),
        // As with the plain transport: a runner port that cannot open stops the process.
        Layer.orDie
      )
    })
  )

/**
 * The composition root: telemetry, storage, migrations, services, key
 * bootstrap, the cluster runner and the HTTP server, all from one ServiceConfig. Used by
 * src/main.ts and by the tests (which pass their own configuration).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Duration, Effect, Layer } from "effect"
import { HttpMiddleware, HttpRouter, HttpServer } from "effect/http"
import { RunEntityLive } from "../actors/RunEntityLive.ts"
import { RunTrees } from "../actors/RunTrees.ts"
import { ThreadEntityLive } from "../actors/ThreadEntityLive.ts"
import { WorkerEntityLive, WorkerStartsLive } from "../actors/WorkerEntityLive.ts"
import { Draining } from "../http/Draining.ts"
import * as Listener from "../http/Listener.ts"
import * as PreviewServer from "../http/PreviewServer.ts"
import * as RequestTelemetry from "../http/RequestTelemetry.ts"
import * as Server from "../http/Server.ts"
import { ApiKeys } from "./access/ApiKeys.ts"
import * as Bootstrap from "./access/Bootstrap.ts"
import { Idempotency } from "./access/Idempotency.ts"
import { RateLimiter } from "./access/RateLimiter.ts"
import { SpendQuota } from "./access/SpendQuota.ts"
import { UploadSlots } from "./access/UploadSlots.ts"
import { Agents } from "./agents/Agents.ts"
import { Artifacts } from "./artifacts/Artifacts.ts"
import { Files } from "./artifacts/Files.ts"
import { BrowserProfiles } from "./browser/BrowserProfiles.ts"
import * as Cluster from "./cluster/Cluster.ts"
import * as DeadRunners from "./cluster/DeadRunners.ts"
import { CodehostTools } from "./codehost/CodehostTools.ts"
import { CodehostAuthorize } from "./codehost/ConnectionAuthorize.ts"
import { CodehostConnections } from "./codehost/Connections.ts"
import { CodehostWebhooks } from "./codehost/ConnectionWebhooks.ts"
import { ServiceConfig, type ServiceConfigShape } from "./config/ServiceConfig.ts"
import { SignedDelivery } from "./delivery/SignedDelivery.ts"
import { EnvironmentRepo } from "./environments/EnvironmentRepo.ts"
import { Environments } from "./environments/Environments.ts"
import { EnvironmentSignals } from "./environments/EnvironmentSignals.ts"
import { RemoteWorkspaces } from "./environments/RemoteWorkspaces.ts"
import { RunnerLink } from "./environments/RunnerLink.ts"
import { IdGenerator } from "./IdGenerator.ts"
import { Interactions } from "./interactions/Interactions.ts"
import { ToolApprovalHooks } from "./interactions/ToolApprovalHooks.ts"
import { Bands } from "./model/Bands.ts"
import { Models } from "./model/Models.ts"
import { NodeId } from "./NodeId.ts"
import { Outbound } from "./outbound/Outbound.ts"
import { ResultDispatch } from "./resultHandlers/ResultDispatch.ts"
import { ResultHandlers } from "./resultHandlers/ResultHandlers.ts"
import { AgentLoop } from "./runs/AgentLoop.ts"
import { Delegation } from "./runs/Delegation.ts"
import { EventLog } from "./runs/EventLog.ts"
import { Finalize } from "./runs/Finalize.ts"
import { Parking } from "./runs/Parking.ts"
import { RunRecovery, RunRecoveryLive } from "./runs/RunRecovery.ts"
import { Runs } from "./runs/Runs.ts"
import { RunStart } from "./runs/RunStart.ts"
import { RunTools } from "./runs/RunTools.ts"
import { StepLoop } from "./runs/StepLoop.ts"
import { ToolGate } from "./runs/ToolGate.ts"
import * as MasterKeys from "./secrets/MasterKeys.ts"
import { SecretContexts } from "./secrets/SecretContexts.ts"
import { Secrets } from "./secrets/Secrets.ts"
import { stage } from "./ShutdownDeadline.ts"
import { ApprovalMemory } from "./store/ApprovalMemory.ts"
import * as Database from "./store/Database.ts"
import { EventRepo } from "./store/EventRepo.ts"
import { FollowupRepo } from "./store/FollowupRepo.ts"
import { InteractionRepo } from "./store/InteractionRepo.ts"
import * as Migrations from "./store/Migrations.ts"
import { NodeRepo } from "./store/NodeRepo.ts"
import { RunRepo } from "./store/RunRepo.ts"
import { WorkerRepo } from "./store/WorkerRepo.ts"
import * as Logging from "./telemetry/Logging.ts"
import * as Otlp from "./telemetry/Otlp.ts"
import { MetricsRegistry, ServiceMetrics } from "./telemetry/ServiceMetrics.ts"
import { History } from "./threads/History.ts"
import { Threads } from "./threads/Threads.ts"
import { WorkspaceBrowser } from "./threads/WorkspaceBrowser.ts"
import { HttpConnections } from "./tools/HttpConnections.ts"
import { McpSessions } from "./tools/McpSessions.ts"
import { ToolServers } from "./tools/ToolServers.ts"
import { PreviewOrigin } from "./workspace/PreviewOrigin.ts"
import { Previews } from "./workspace/Previews.ts"
import { ThreadWorkspaces } from "./workspace/ThreadWorkspaces.ts"

const outboundLayer = Layer.unwrap(
  Effect.map(
    ServiceConfig,
    (config) =>
      Outbound.layer({
        allowPrivate: config.allowPrivateUrls,
        dnsServers: config.dnsServers,
        trustedOrigins: config.trustedOrigins
      })
  )
)

/** Code-hosting connections: the resource, its authorization and GitHub's webhooks. */
const Codehost = Layer.mergeAll(CodehostAuthorize.layer, CodehostWebhooks.layer, CodehostTools.layer).pipe(
  Layer.provideMerge(CodehostConnections.layer)
)

/** Environments of remote workspaces (issue 31): the resource, the runners' routes and the calls to runners. */
const EnvironmentsLayer = Layer.mergeAll(RunnerLink.layer, RemoteWorkspaces.layer).pipe(
  Layer.provideMerge(Environments.layer),
  Layer.provideMerge(EnvironmentRepo.layer),
  Layer.provideMerge(EnvironmentSignals.layer)
)

const Adapters = Layer.mergeAll(
  EnvironmentsLayer,
  SecretContexts.layer,
  BrowserProfiles.layer,
  ToolApprovalHooks.layer,
  ResultHandlers.layer,
  ToolServers.layer,
  HttpConnections.layer,
  Codehost
).pipe(Layer.provideMerge(Layer.mergeAll(Secrets.layer, SignedDelivery.layer)))

const Services = Layer.mergeAll(
  Agents.layer,
  Threads.layer,
  WorkspaceBrowser.layer.pipe(Layer.provide(Threads.layer)),
  History.layer,
  Idempotency.layer,
  Idempotency.layerPurge,
  ApiKeys.layer,
  Bands.layer,
  RateLimiter.layer,
  UploadSlots.layer,
  SpendQuota.layer,
  Previews.layer,
  ResultDispatch.layer,
  Files.layer
).pipe(
  Layer.provideMerge(ThreadWorkspaces.layerLive),
  Layer.provideMerge(PreviewOrigin.layer),
  Layer.provideMerge(Adapters),
  Layer.provideMerge(outboundLayer),
  Layer.provideMerge(Artifacts.layer)
)

/** Runs: the loop, its storage and stream, the run and worker entities, and the service that dispatches to them. */
const RunsLayer = Layer.mergeAll(Runs.layer, RunRecoveryLive.pipe(Layer.provideMerge(RunRecovery.layer))).pipe(
  Layer.provideMerge(RunStart.layer),
  Layer.provideMerge(Layer.mergeAll(RunEntityLive, WorkerEntityLive, ThreadEntityLive)),
  Layer.provideMerge(Interactions.layer),
  Layer.provideMerge(RunTrees.layer),
  Layer.provideMerge(AgentLoop.layer),
  Layer.provideMerge(StepLoop.layer),
  Layer.provideMerge(Layer.mergeAll(Parking.layer, ToolGate.layer, RunTools.layer, Finalize.layer)),
  Layer.provideMerge(Delegation.layer),
  Layer.provideMerge(WorkerStartsLive),
  Layer.provideMerge(EventLog.layer),
  Layer.provideMerge(
    Layer.mergeAll(
      RunRepo.layer,
      WorkerRepo.layer,
      FollowupRepo.layer,
      InteractionRepo.layer,
      ApprovalMemory.layer,
      Models.layer,
      McpSessions.layer,
      NodeRepo.layer,
      EventRepo.layer,
      ServiceMetrics.layer
    )
  )
)

/** Everything but the listening socket: storage, migrations, services, bootstrap, cluster. */
export const layerServices = Layer.mergeAll(
  // DeadRunners after the cluster: its runner table exists by then.
  Layer.merge(RunsLayer, DeadRunners.layer).pipe(Layer.provideMerge(Services), Layer.provideMerge(Cluster.layer)),
  Bootstrap.layer.pipe(Layer.provide(ApiKeys.layer)),
  Draining.layer
).pipe(
  // Stage marks (build order bottom up, stop order top down) name what a stop cut short was still waiting on.
  Layer.provideMerge(stage("starting: services and the cluster runner", "stopping: the database and the telemetry")),
  Layer.provideMerge(Migrations.layer),
  Layer.provideMerge(stage("starting: migrations", "stopping: the database and the telemetry")),
  Layer.provideMerge(Database.layer),
  // Telemetry first, so that everything above it logs, traces and counts through it.
  Layer.provideMerge(Layer.mergeAll(Otlp.layer, Logging.layer)),
  Layer.provideMerge(Layer.mergeAll(NodeId.layer, MetricsRegistry.layer)),
  Layer.provideMerge(IdGenerator.layer),
  // Configuration problems stop the process before anything opens or listens.
  Layer.provideMerge(MasterKeys.layer)
)

/**
 * The routes, served on the configured host and port (port 0: any free port).
 * The socket opens last, once the services and the router are built: under
 * node:cluster (SVC_PROCESSES) the primary hands a worker connections as soon
 * as it listens, and a port not yet bound refuses rather than leaves a client
 * waiting. Until the routes are attached (and after they are detached at
 * shutdown) the listener answers 503 itself; it stops first (http/Listener.ts).
 * The previews' listener (http/PreviewServer.ts) binds just before the API's,
 * whose answers name its origin; both stop together.
 */
const layerHttp = (config: ServiceConfigShape) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const app = yield* HttpRouter.toHttpEffect(Server.layer)
      const listener = yield* Listener.make
      const previews = yield* Listener.make
      return Listener.layerStop([listener, previews], config.shutdownGraceMs).pipe(
        Layer.provideMerge(
          HttpServer.serve(app).pipe(
            HttpServer.withLogAddress,
            Layer.provide(
              Layer.succeed(HttpMiddleware.SpanNameGenerator)(RequestTelemetry.spanName(Server.routes(config)))
            ),
            Layer.provideMerge(
              NodeHttpServer.layerServer(() => listener.server, {
                port: config.port,
                host: config.host,
                gracefulShutdownTimeout: Duration.millis(config.shutdownGraceMs)
              })
            )
          )
        ),
        Layer.provideMerge(PreviewServer.layer(previews, config))
      )
    })
  )

/** The whole service. */
export const layer = Layer.unwrap(
  Effect.map(ServiceConfig, (config) =>
    // The services are part of the output so tests can reach them (e.g. RunRecovery); main ignores it.
    stage("serving", "stopping: the HTTP listeners (SVC_SHUTDOWN_GRACE_MS)").pipe(
      Layer.provideMerge(layerHttp(config)),
      Layer.provideMerge(
        stage("starting: the HTTP listeners", "stopping: the runs, the cluster runner and the services")
      ),
      Layer.provideMerge(layerServices),
      Layer.provideMerge(NodeHttpServer.layerHttpServices)
    ))
)

/**
 * The declared services of managed workspaces (spec 2.1.3 `services`), on
 * this node: long-lived sandbox processes of a workspace (Sandbox.startService),
 * started when the thread's workspace opens and not already running here.
 * `restartPolicy`: `on-resume` (default) starts the service at every open
 * that finds it not running (its process ended, the workspace's processes
 * were stopped by hibernation, the node restarted); `manual` starts it only
 * when the workspace is created, never again. Services of a workspace with a
 * network reach out through an egress proxy of their own (the run's lives
 * only as long as the run), under the same policy. They stop when the thread
 * is deleted (`stop`) and when the service process shuts down (the layer's
 * scope). Preview traffic counts as use of the workspace (WorkspaceLifecycle.touch).
 */
import { Context, Effect, Exit, Layer, Scope, Semaphore } from "effect"
import type { ManagedWorkspace } from "../../domain/Agent.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { Outbound } from "../outbound/Outbound.ts"
import * as EgressProxy from "./EgressProxy.ts"
import type { NetworkMode } from "./NetworkPolicy.ts"
import { Sandbox, type Workspace } from "./Sandbox.ts"

export interface EnsureInput {
  readonly workspace: Workspace
  readonly spec: ManagedWorkspace
  readonly network: NetworkMode
  /** The workspace_env projections, opened for this open. */
  readonly env: Readonly<Record<string, string>>
  /** The workspace is being created (its status was `uninitialized`): `manual` services start too. */
  readonly creating: boolean
}

interface Group {
  readonly scope: Scope.Closeable
  /** Names of the services whose process runs. */
  readonly running: Set<string>
  egress: string | undefined
}

export class WorkspaceServices extends Context.Service<WorkspaceServices, {
  /**
   * Starts the declared services that should run and do not; returns once each one with a port
   * has its port listening (or ended, or `startTimeoutMs` passed). A service that cannot start
   * is logged (its own output is in `.svc/logs/<name>.log`); it never fails the run.
   */
  readonly ensure: (input: EnsureInput) => Effect.Effect<void>
  /** Stops the services of a workspace (its thread is deleted, or its processes hibernate). */
  readonly stop: (id: string) => Effect.Effect<void>
  /** The names of the services of a workspace that run on this node. */
  readonly running: (id: string) => Effect.Effect<ReadonlyArray<string>>
}>()("svc/WorkspaceServices") {
  static readonly layer = (options: { readonly startTimeoutMs?: number } = {}) =>
    Layer.effect(WorkspaceServices)(make(options.startTimeoutMs ?? 30_000))
}

const make = Effect.fn("WorkspaceServices.make")(function*(startTimeoutMs: number) {
  const sandbox = yield* Sandbox
  const outbound = yield* Outbound
  const config = yield* ServiceConfig
  const groups = new Map<string, Group>()
  const locks = new Map<string, Semaphore.Semaphore>()
  const lockOf = (id: string) => {
    const found = locks.get(id)
    if (found !== undefined) return found
    const made = Semaphore.makeUnsafe(1)
    locks.set(id, made)
    return made
  }

  const stopGroup = (id: string) =>
    Effect.suspend(() => {
      const group = groups.get(id)
      groups.delete(id)
      return group === undefined ? Effect.void : Scope.close(group.scope, Exit.void)
    })

  // Graceful shutdown stops every service of this node.
  yield* Effect.addFinalizer(() => Effect.forEach([...groups.keys()], stopGroup, { discard: true }))

  const groupOf = (id: string) =>
    Effect.suspend(() => {
      const found = groups.get(id)
      if (found !== undefined) return Effect.succeed(found)
      return Effect.map(Scope.make(), (scope) => {
        const group: Group = { scope, running: new Set(), egress: undefined }
        groups.set(id, group)
        return group
      })
    })

  /** The services' egress proxy, started once per group. */
  const egressOf = (group: Group, id: string, network: NetworkMode) =>
    Effect.gen(function*() {
      if (network.mode === "offline") return undefined
      if (group.egress !== undefined) return group.egress
      const socketPath = yield* sandbox.egressSocketPath(id, "services")
      yield* EgressProxy.start({
        socketPath,
        rules: { network, allowPrivate: config.allowPrivateUrls, serviceHosts: [] },
        resolve: outbound.resolve
      }).pipe(
        Scope.provide(group.scope),
        Effect.mapError((e) => new Error(`the services' egress proxy could not start: ${e.message}`))
      )
      group.egress = socketPath
      return socketPath
    })

  const ensure = (input: EnsureInput) =>
    Effect.gen(function*() {
      const { workspace } = input
      const wanted = (input.spec.services ?? []).filter((s) =>
        (s.restartPolicy ?? "on-resume") === "on-resume" || input.creating
      )
      if (wanted.length === 0) return
      const group = yield* groupOf(workspace.id)
      const starting = wanted.filter((s) => !group.running.has(s.name))
      if (starting.length === 0) return
      const egress = yield* egressOf(group, workspace.id, input.network)
      const readies = yield* Effect.forEach(starting, (service) =>
        sandbox.startService(workspace, { ...service, env: input.env, egress }).pipe(
          Scope.provide(group.scope),
          Effect.tap((process) => {
            group.running.add(service.name)
            return process.wait.pipe(
              Effect.tap(({ exitCode, startError }) => {
                group.running.delete(service.name)
                return startError === undefined
                  ? Effect.logInfo(`service ${service.name} of workspace ${workspace.id} exited with code ${exitCode}`)
                  : Effect.logWarning(
                    `service ${service.name} of workspace ${workspace.id} could not start: ${startError}`
                  )
              }),
              Effect.forkIn(group.scope)
            )
          }),
          Effect.map((process) =>
            process.ready
          ),
          Effect.catch((e) =>
            Effect.as(
              Effect.logWarning(`service ${service.name} of workspace ${workspace.id} could not start: ${e.message}`),
              Effect.void
            )
          )
        ))
      yield* Effect.timeoutOption(Effect.all(readies, { concurrency: "unbounded", discard: true }), startTimeoutMs)
    }).pipe(
      Effect.catch((e) =>
        Effect.logWarning(`the services of workspace ${input.workspace.id} could not start: ${e.message}`)
      ),
      lockOf(input.workspace.id).withPermits(1)
    )

  return WorkspaceServices.of({
    ensure,
    stop: (id) => lockOf(id).withPermits(1)(stopGroup(id)),
    running: (id) => Effect.sync(() => [...(groups.get(id)?.running ?? [])])
  })
})

/**
 * The managed workspace of a thread (spec 2.1.3, 2.2): one sandbox per
 * thread, created on the first run that needs it (status `uninitialized ->
 * starting -> active`, or `failed` when the sandbox cannot start or its
 * seed cannot be cloned), on the
 * spec pinned when the thread was created. For each run it opens the
 * sandbox, starts the workspace's egress proxy when its network is not
 * offline (for as long as the run executes), clones the seed into a new
 * workspace (WorkspaceSeed), opens the `workspace_env`
 * projections of its secret contexts at that moment, starts its declared
 * services that should run (WorkspaceServices), and offers the workspace
 * tools as one more tool family. Deleting the thread stops its services and
 * deletes its files. Its files follow the thread to another node through snapshots
 * (WorkspaceLifecycle): restored when the open finds the local copy missing
 * or older (status `restoring`), taken when the run's scope closes.
 *
 * A run tree shares it (subagents): the runs using it at once on this node (a
 * root and its workers, placed beside it: WorkerStarts) share one open, its
 * proxy and its snapshot (SharedUse), taken when the last of them is done;
 * each run gets its own secret projections and tools. Concurrent tool calls
 * are as safe as concurrent commands on one disk: each file write replaces its
 * file at once (WorkspaceFiles), commands interleave, git operations take
 * turns.
 */
import { Context, Effect, Layer, Option, Redacted, type Scope, Semaphore } from "effect"
import type { ManagedWorkspace } from "../../domain/Agent.ts"
import type { AgentId, ThreadId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { SealedState } from "../secrets/SealedState.ts"
import { SecretContexts } from "../secrets/SecretContexts.ts"
import { Secrets } from "../secrets/Secrets.ts"
import { ThreadRepo } from "../store/ThreadRepo.ts"
import { WorkspaceLifecycleRepo } from "../store/WorkspaceLifecycleRepo.ts"
import * as WorkspaceSnapshotRepo from "../store/WorkspaceSnapshotRepo.ts"
import { nowIso } from "../Time.ts"
import type { GitOperation, ToolFamily } from "../tools/ToolFamily.ts"
import * as EgressProxy from "./EgressProxy.ts"
import type { EgressRules, NetworkMode } from "./NetworkPolicy.ts"
import { type Limits, limitsOf } from "./ResourceClass.ts"
import { Sandbox, type Workspace } from "./Sandbox.ts"
import * as SandboxLive from "./SandboxLive.ts"
import * as SharedUse from "./SharedUse.ts"
import type { SnapshotUnavailable } from "./SnapshotUnavailable.ts"
import * as WorkspaceGit from "./WorkspaceGit.ts"
import { type SnapshotReport, WorkspaceLifecycle } from "./WorkspaceLifecycle.ts"
import * as WorkspaceSeed from "./WorkspaceSeed.ts"
import { WorkspaceServices } from "./WorkspaceServices.ts"
import * as WorkspaceTools from "./WorkspaceTools.ts"
import { WorkspaceUnavailable } from "./WorkspaceUnavailable.ts"

/** The network mode of a spec: `public` when the spec names none (spec 2.1.3: `{ mode?: 'public' }`). */
export const networkOf = (spec: ManagedWorkspace): NetworkMode => {
  const network = spec.network
  if (network === undefined) return { mode: "public" }
  if ("allowDomains" in network) return { mode: "restricted", allowDomains: network.allowDomains }
  return network.mode === "offline" ? { mode: "offline" } : { mode: "public" }
}

/** What the runs using a workspace on this node at once share (SharedUse). */
interface OnNode {
  readonly workspace: Workspace
  readonly limits: Limits
  readonly network: NetworkMode
  /** It was being created when opened (`manual` services start too). */
  readonly creating: boolean
  readonly gitLock: Semaphore.Semaphore
}

/** The workspace tools of a run, and the sandbox they run in (the managed browser starts there: src/browser/). */
export type OpenedWorkspace = ToolFamily & {
  readonly sandboxed: { readonly workspace: Workspace; readonly rules: EgressRules }
}

export class ThreadWorkspaces extends Context.Service<ThreadWorkspaces, {
  /**
   * The workspace tools of a run of `threadId`; the sandbox's network lives as long as the scope, and
   * its closing snapshots the files (`report` tells the run when that snapshot is not taken or stored).
   */
  readonly open: (
    threadId: ThreadId,
    principal: Principal,
    spec: ManagedWorkspace,
    report: SnapshotReport
  ) => Effect.Effect<OpenedWorkspace, WorkspaceUnavailable | SnapshotUnavailable, Scope.Scope>
  /** Deletes the workspace files of these threads (they were deleted). */
  readonly remove: (threadIds: ReadonlyArray<ThreadId>) => Effect.Effect<void>
  /** The threads of an agent that have a managed workspace (read before the agent's threads are deleted with it). */
  readonly threadsOf: (agentId: AgentId) => Effect.Effect<ReadonlyArray<ThreadId>>
}>()("svc/ThreadWorkspaces") {
  static readonly layer = Layer.effect(ThreadWorkspaces)(
    Effect.gen(function*() {
      const sandbox = yield* Sandbox
      const threads = yield* ThreadRepo
      const contexts = yield* SecretContexts
      const secrets = yield* Secrets
      const outbound = yield* Outbound
      const config = yield* ServiceConfig
      const lifecycle = yield* WorkspaceLifecycle
      const services = yield* WorkspaceServices

      /** The workspace_env projections of the spec's secret contexts, opened now. */
      const environment = (principal: Principal, spec: ManagedWorkspace) =>
        Effect.gen(function*() {
          const env: Record<string, string> = {}
          for (const [i, contextId] of (spec.secretContexts ?? []).entries()) {
            const context = yield* contexts.get(principal, contextId).pipe(
              Effect.mapError(() =>
                new WorkspaceUnavailable({ message: `secret context ${contextId} of the workspace is gone` })
              )
            )
            for (const projection of context.projections) {
              if (projection.type !== "workspace_env") continue
              const value = yield* secrets.reveal(principal, projection.secretId, `workspace.secretContexts[${i}]`)
                .pipe(
                  Effect.mapError(() =>
                    new WorkspaceUnavailable({ message: `a secret of secret context ${context.name} is gone` })
                  )
                )
              env[projection.env] = Redacted.value(value)
            }
          }
          return env
        })

      const shared = SharedUse.make<OnNode, WorkspaceUnavailable | SnapshotUnavailable, SnapshotReport>()

      /**
       * The workspace opened on this node for the runs that use it now (SharedUse): restored or seeded,
       * its egress proxy listening, the sandbox checked; its snapshot is taken when the last of them
       * leaves, and told to that run (`last`).
       */
      const onNode = (threadId: ThreadId, spec: ManagedWorkspace, last: () => SnapshotReport) =>
        Effect.gen(function*() {
          const found = yield* threads.find(threadId)
          const status = Option.isSome(found) ? found.value.thread.workspace?.status : undefined
          const fresh = status !== "active"
          // Set once the files are in place: only then does closing the scope snapshot them.
          let ready: Workspace | undefined
          const snapshot = yield* Effect.acquireRelease(
            lifecycle.prepare(threadId, status),
            () => lifecycle.release(threadId, ready, last())
          )
          if (Option.isSome(snapshot)) yield* threads.setWorkspaceStatus(threadId, "restoring", yield* nowIso)
          else if (status === "uninitialized" || status === "archived") {
            yield* threads.setWorkspaceStatus(threadId, "starting", yield* nowIso)
          }
          const network = networkOf(spec)
          // A command may not outlast the step that runs it (SVC_MAX_STEP_MS): a longer timeoutMs is refused up front.
          const classLimits = limitsOf[spec.resources ?? "standard"]
          const limits = {
            ...classLimits,
            maxTimeoutMs: Math.min(classLimits.maxTimeoutMs, config.maxStepMs),
            defaultTimeoutMs: Math.min(classLimits.defaultTimeoutMs, config.maxStepMs)
          }
          const egress = (rules: NetworkMode, serviceHosts: ReadonlyArray<string>) =>
            Effect.flatMap(sandbox.egressSocketPath(threadId), (socketPath) =>
              EgressProxy.start({
                socketPath,
                rules: { network: rules, allowPrivate: config.allowPrivateUrls, serviceHosts },
                resolve: outbound.resolve
              }).pipe(Effect.mapError((e) =>
                new WorkspaceUnavailable({ message: `the workspace's egress proxy could not start: ${e.message}` })
              )))
          /**
           * A new workspace gets its seed (one restored from a snapshot has its files already), cloned
           * through a proxy of its own that reaches the seed's host only (named by the service, so
           * whatever allowDomains says), for the clone only: the runs' proxy never opens it.
           */
          const seed = spec.seed
          const seeding = fresh && seed !== undefined && Option.isNone(snapshot)
            ? Effect.scoped(
              egress({ mode: "restricted", allowDomains: [] }, [WorkspaceSeed.hostOf(seed) ?? ""]).pipe(
                Effect.andThen(sandbox.open(threadId, limits, { network: "proxy" })),
                Effect.flatMap((online) => WorkspaceSeed.clone(sandbox, online, seed))
              )
            )
            : Effect.void
          const opened = Effect.gen(function*() {
            yield* seeding
            if (network.mode !== "offline") yield* egress(network, [])
            return yield* sandbox.open(threadId, limits, { network: network.mode === "offline" ? "offline" : "proxy" })
          })
          const workspace = yield* opened.pipe(
            Effect.tap((workspace) =>
              Option.isSome(snapshot) ? lifecycle.restore(threadId, workspace, snapshot.value) : Effect.void
            ),
            Effect.tapError((e) =>
              Effect.flatMap(
                nowIso,
                (now) =>
                  threads.setWorkspaceStatus(threadId, e._tag === "SnapshotUnavailable" ? "unavailable" : "failed", now)
              )
            )
          )
          ready = workspace
          if (fresh || Option.isSome(snapshot)) yield* threads.setWorkspaceStatus(threadId, "active", yield* nowIso)
          const creating = status === "uninitialized" || status === "starting"
          return { workspace, limits, network, creating, gitLock: Semaphore.makeUnsafe(1) } satisfies OnNode
        })

      /** Each run its own secret projections (opened now) and tools, on the workspace it shares with its tree. */
      const open = Effect.fn("ThreadWorkspaces.open")(function*(
        threadId: ThreadId,
        principal: Principal,
        spec: ManagedWorkspace,
        report: SnapshotReport
      ) {
        const { workspace, limits, network, creating, gitLock } = yield* shared.use(
          threadId,
          report,
          (last) => onNode(threadId, spec, last)
        )
        const env = yield* environment(principal, spec)
        yield* services.ensure({ workspace, spec, network, env, creating })
        const git = WorkspaceGit.make({
          sandbox,
          id: threadId,
          limits,
          allowPrivate: config.allowPrivateUrls,
          resolve: outbound.resolve
        })
        return {
          ...WorkspaceTools.make({
            sandbox,
            workspace,
            shell: spec.shell === true,
            documents: spec.documents === true,
            mediaEditing: spec.mediaEditing === true,
            env,
            secrets: Object.values(env)
          }),
          // Each git operation has a proxy of its own on the workspace's one git socket: one at a time.
          git: { exec: (operation: GitOperation) => gitLock.withPermits(1)(git.exec(operation)) },
          sandboxed: { workspace, rules: { network, allowPrivate: config.allowPrivateUrls, serviceHosts: [] } }
        } satisfies OpenedWorkspace
      })

      return {
        open,
        remove: (threadIds) =>
          Effect.andThen(
            Effect.forEach(threadIds, (id) => Effect.andThen(services.stop(id), sandbox.remove(id)), { discard: true }),
            lifecycle.forget(threadIds)
          ),
        threadsOf: threads.withWorkspace
      }
    })
  )

  /** With the sandbox under SVC_WORKSPACE_ROOT and the stores it reads. */
  static readonly layerLive = ThreadWorkspaces.layer.pipe(
    Layer.provideMerge(
      WorkspaceLifecycle.layer.pipe(
        Layer.provide([WorkspaceSnapshotRepo.layer, WorkspaceLifecycleRepo.layer, SealedState.layer])
      )
    ),
    Layer.provide([ThreadRepo.layer, SecretContexts.layer, Secrets.layer]),
    Layer.provideMerge(WorkspaceServices.layer()),
    Layer.provideMerge(
      Layer.unwrap(Effect.map(ServiceConfig, (config) => SandboxLive.layer({ root: config.workspaceRoot })))
    )
  )
}

/**
 * Opens the tools of one run: each tool family of the plan is connected for
 * the run (MCP servers, HTTP connections), what could not be connected is
 * announced on the stream, and everything is merged into the run's Toolset
 * with the built-ins. A new family plugs in here, not in the loop.
 */
import { Context, Effect, Layer, type Scope } from "effect"
import type { RunId, ThreadId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { Secrets } from "../secrets/Secrets.ts"
import * as HttpTools from "../tools/HttpTools.ts"
import { McpSessions } from "../tools/McpSessions.ts"
import * as McpTools from "../tools/McpTools.ts"
import * as SpecCache from "../tools/SpecCache.ts"
import * as Toolset from "../tools/Toolset.ts"
import { ThreadWorkspaces } from "../workspace/ThreadWorkspaces.ts"
import type { SnapshotUnavailable } from "../workspace/SnapshotUnavailable.ts"
import type { WorkspaceUnavailable } from "../workspace/WorkspaceUnavailable.ts"
import type { Writer } from "./EventLog.ts"
import type { RunPlan } from "../../domain/RunPlan.ts"

export class RunTools extends Context.Service<RunTools, {
  /**
   * Connections live as long as the scope (the run's execution). `resumed`: the run resumes after
   * a park, so tool lists are read afresh. Fails when the thread's managed workspace cannot start.
   */
  readonly open: (
    run: { readonly runId: RunId; readonly threadId: ThreadId },
    principal: Principal,
    plan: RunPlan,
    writer: Writer,
    resumed: boolean
  ) => Effect.Effect<Toolset.Toolset, WorkspaceUnavailable | SnapshotUnavailable, Scope.Scope>
}>()("svc/RunTools") {
  static readonly layer = Layer.effect(RunTools)(
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const secrets = yield* Secrets
      const sessions = yield* McpSessions
      const workspaces = yield* ThreadWorkspaces
      const specs = SpecCache.make(outbound.fetch)

      const open = Effect.fn("RunTools.open")(function*(
        { runId, threadId }: { readonly runId: RunId; readonly threadId: ThreadId },
        principal: Principal,
        plan: RunPlan,
        writer: Writer,
        resumed: boolean
      ) {
        // The workspace first: a run whose sandbox cannot start ends before anything else is opened.
        const report = (message: string) => writer.emit({ type: "error", errorText: message })
        const workspace = plan.workspace === undefined ? [] : [yield* workspaces.open(threadId, principal, plan.workspace, report)]
        // The headers of every tool request made for the run: a worker names its tree (subagents).
        const identity = { runId, rootRunId: plan.worker?.rootRunId ?? runId, workerRef: plan.worker?.workerRef ?? null }
        const mcp = yield* McpTools.connectAll({
          principal,
          run: identity,
          servers: plan.toolServers,
          sessions,
          relist: resumed,
          reveal: secrets.reveal
        })
        for (const problem of mcp.problems) yield* writer.emit({ type: "error", errorText: problem })
        const http = yield* HttpTools.connectAll({
          principal,
          run: identity,
          connections: plan.httpConnections,
          fetch: outbound.fetch,
          cache: specs,
          allowPrivate: outbound.allowPrivate,
          reveal: secrets.reveal
        })
        for (const { connectionId, name, errorCode, message } of http.unavailable) {
          yield* writer.emit({ type: "data-svc-http-connection-unavailable", data: { connectionId, name, errorCode, message } })
        }
        return Toolset.make({
          families: [...workspace, mcp, http],
          skills: plan.skills,
          userInteraction: plan.userInteraction,
          subagents: plan.subagents === true
        })
      })

      return { open }
    })
  )
}

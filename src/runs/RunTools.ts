/**
 * Opens the tools of one run: each tool family of the plan is connected for
 * the run (MCP servers, HTTP connections), what could not be connected is
 * announced on the stream, and everything is merged into the run's Toolset
 * with the built-ins. A new family plugs in here, not in the loop.
 */
import { Context, Effect, Layer, type Scope } from "effect"
import type { AgentId, ResultHandlerId, RunId, ThreadId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { UsageTotal } from "../../domain/Run.ts"
import type { RunPlan } from "../../domain/RunPlan.ts"
import { Artifacts } from "../artifacts/Artifacts.ts"
import * as ExportTool from "../artifacts/ExportTool.ts"
import { Files } from "../artifacts/Files.ts"
import { BrowserProfiles } from "../browser/BrowserProfiles.ts"
import * as BrowserRun from "../browser/BrowserRun.ts"
import { CodehostTools } from "../codehost/CodehostTools.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { RemoteWorkspaces } from "../environments/RemoteWorkspaces.ts"
import * as GenerationSource from "../media/GenerationSource.ts"
import * as GenerationTools from "../media/GenerationTools.ts"
import * as MediaMeter from "../media/MediaMeter.ts"
import { MediaViewTools } from "../media/view/MediaViewTools.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { digestOf, ResultDispatch } from "../resultHandlers/ResultDispatch.ts"
import { Secrets } from "../secrets/Secrets.ts"
import * as HttpTools from "../tools/HttpTools.ts"
import { McpSessions } from "../tools/McpSessions.ts"
import * as McpTools from "../tools/McpTools.ts"
import { isJson } from "../tools/ResultSpill.ts"
import * as SpecCache from "../tools/SpecCache.ts"
import type { Archive } from "../tools/ToolFamily.ts"
import * as Toolset from "../tools/Toolset.ts"
import * as WebTools from "../web/WebTools.ts"
import { Sandbox } from "../workspace/Sandbox.ts"
import type { SnapshotUnavailable } from "../workspace/SnapshotUnavailable.ts"
import { ThreadWorkspaces } from "../workspace/ThreadWorkspaces.ts"
import type { WorkspaceUnavailable } from "../workspace/WorkspaceUnavailable.ts"
import * as AttachmentFiles from "./AttachmentFiles.ts"
import type { Writer } from "./EventLog.ts"
import * as Progress from "./Progress.ts"

interface RunRef {
  readonly runId: RunId
  readonly threadId: ThreadId
  readonly agentId: AgentId
  /** The run's `policies.mediaFidelity` (view_media renders by it). */
  readonly mediaFidelity: "standard" | "spatial"
}

/** The run's oversized results archived through `handlerId`, one logical artifact per tool call. */
const archiveThrough = (
  dispatch: ResultDispatch["Service"],
  run: RunRef,
  principal: Principal,
  handlerId: ResultHandlerId
): Archive => ({
  resultHandlerId: handlerId,
  send: (call, step, full) =>
    Effect.flatMap(
      dispatch.dispatch({
        handlerId,
        owner: principal,
        runId: run.runId,
        threadId: run.threadId,
        agentId: run.agentId,
        toolName: call.name,
        toolCallId: call.id,
        stepNumber: step + 1,
        mediaType: isJson(full) ? "application/json" : "text/plain",
        ...digestOf(full),
        content: full,
        purpose: "overflow",
        requestKey: `${run.runId}:${call.id}:overflow`
      }),
      ({ answer: { artifactId, url } }) =>
        // Checked by HandlerResponse for the purpose "overflow": an answer without one never gets here.
        artifactId === undefined
          ? Effect.die(new Error("a result handler's overflow answer has no artifactId"))
          : Effect.succeed({ artifactId, ...(url === undefined ? {} : { url }) })
    )
})

export interface RunToolsOptions {
  readonly resumed: boolean
  readonly firstExecution: boolean
  readonly snapshotUnavailable: (error: SnapshotUnavailable) => Effect.Effect<void>
  /** The run's running totals: media generations are charged to them (src/media/MediaMeter.ts). */
  readonly usage: { current: UsageTotal }
}

export class RunTools extends Context.Service<RunTools, {
  /**
   * Connections live as long as the scope (the run's execution). `resumed`: the run resumes after
   * a park, so tool lists are read afresh. `firstExecution`: the run has taken no step yet, so its
   * attachments are placed in the managed workspace. Fails when that workspace cannot start.
   * `snapshotUnavailable` hears, when the scope closes, that the workspace's snapshot could not be stored.
   */
  readonly open: (
    run: RunRef,
    principal: Principal,
    plan: RunPlan,
    writer: Writer,
    options: RunToolsOptions
  ) => Effect.Effect<Toolset.Toolset, WorkspaceUnavailable | SnapshotUnavailable, Scope.Scope>
}>()("svc/RunTools") {
  static readonly layer = Layer.effect(RunTools)(
    Effect.gen(function*() {
      const outbound = yield* Outbound
      const mediaViews = yield* MediaViewTools
      const secrets = yield* Secrets
      const sessions = yield* McpSessions
      const workspaces = yield* ThreadWorkspaces
      const remoteWorkspaces = yield* RemoteWorkspaces
      const sandbox = yield* Sandbox
      const specs = SpecCache.make(outbound.fetch)
      const dispatch = yield* ResultDispatch
      const artifacts = yield* Artifacts
      const config = yield* ServiceConfig
      const codehostTools = yield* CodehostTools
      const uploads = yield* Files
      const browserProfiles = yield* BrowserProfiles

      const open = Effect.fn("RunTools.open")(function*(
        run: RunRef,
        principal: Principal,
        plan: RunPlan,
        writer: Writer,
        { firstExecution, resumed, snapshotUnavailable, usage }: RunToolsOptions
      ) {
        const { runId, threadId } = run
        // The workspace first: a run whose sandbox cannot start ends before anything else is opened.
        const report = (message: string) => writer.emit({ type: "error", errorText: message })
        const workspace = plan.workspace === undefined
          ? []
          : [
            yield* workspaces.open(threadId, principal, plan.workspace, {
              warn: report,
              unavailable: snapshotUnavailable
            })
          ]
        const files = workspace[0]?.files
        // A worker works in its root's workspace, where the root placed them (they may have changed since).
        if (firstExecution && files !== undefined && plan.attachments !== undefined && plan.worker === undefined) {
          yield* AttachmentFiles.place(artifacts, files, plan.attachments, report)
        }
        const exporter = files === undefined ? undefined : ExportTool.make({
          files,
          artifacts: config.artifacts.store.kind === "none" ? undefined : artifacts,
          dispatch,
          run: { ...run, owner: principal },
          handlerId: plan.exportResultHandlerId,
          signedUrls: plan.signedArtifactUrls === true,
          maxBytes: config.artifacts.fileMaxBytes
        })
        // The headers of every tool request made for the run: a worker names its tree (subagents).
        const identity = {
          runId,
          rootRunId: plan.worker?.rootRunId ?? runId,
          workerRef: plan.worker?.workerRef ?? null
        }
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
          permits: outbound.permitsShape,
          reveal: secrets.reveal
        })
        for (const { connectionId, name, errorCode, message } of http.unavailable) {
          yield* writer.emit({
            type: "data-svc-http-connection-unavailable",
            data: { connectionId, name, errorCode, message }
          })
        }
        // The code host's tools: workspace git goes through the thread's workspace.
        const codehost = plan.codehost === undefined ? [] : [
          yield* codehostTools.open({ principal, runId, threadId, grant: plan.codehost, git: workspace[0]?.git })
        ]
        for (const { problem } of codehost) {
          if (problem !== undefined) yield* writer.emit({ type: "error", errorText: problem })
        }
        // capabilities.media: the kinds frozen in the plan, their files delivered like exports (generatedDeliverables).
        const store = config.artifacts.store.kind === "none" ? undefined : artifacts
        const media = plan.media === undefined || plan.media.length === 0 ? [] : [
          GenerationTools.family(plan.media.map((m) => m.kind), {
            planned: plan.media,
            endpoints: config.media,
            delivery: {
              artifacts: store,
              dispatch,
              run: { ...run, owner: principal },
              handlerId: plan.mediaResultHandlerId,
              signedUrls: plan.signedArtifactUrls === true
            },
            files,
            sources: GenerationSource.reader({
              principal,
              files: uploads,
              artifacts: store,
              workspace: files,
              maxBytes: config.artifacts.fileMaxBytes
            }),
            meter: MediaMeter.make(usage, {
              budgetCents: plan.budgetCents,
              maxRunCents: config.maxRunCents,
              spendAllowanceCents: plan.spendAllowanceCents
            }),
            progress: Progress.make(runId, plan.streamProgress, writer).activity
          })
        ]
        // The managed browser: started in the workspace's sandbox on the run's first browser call.
        const browser = plan.browser === undefined || workspace[0] === undefined || plan.workspace === undefined
          ? []
          : yield* BrowserRun.open({
            sandbox,
            opened: workspace[0],
            spec: plan.workspace,
            plan: plan.browser,
            delivery: {
              artifacts: config.artifacts.store.kind === "none" ? undefined : artifacts,
              dispatch,
              run: { ...run, owner: principal },
              signedUrls: plan.signedArtifactUrls === true
            },
            maxBytes: config.artifacts.fileMaxBytes,
            // The agent's authenticated profile: loaded when the browser starts, saved back when it closes.
            profile: plan.browser.profileKey === undefined
              ? undefined
              : browserProfiles.forRun(principal, plan.browser.profileKey)
          })
        const handlerId = plan.oversizedResultHandlerId
        // A remote workspace's tools go to its environment's runners (src/environments/RemoteWorkspaces.ts).
        const remote = plan.remoteWorkspace === undefined ? [] : [
          remoteWorkspaces.family({
            workspace: plan.remoteWorkspace,
            progress: Progress.make(runId, plan.streamProgress, writer).activity
          })
        ]
        return Toolset.make({
          families: [
            ...workspace,
            ...remote,
            ...(exporter === undefined ? [] : [exporter]),
            mcp,
            http,
            ...(plan.mediaView === undefined ? [] : [
              mediaViews.family({
                principal,
                runId,
                threadId,
                route: plan.route,
                output: plan.mediaView,
                fidelity: run.mediaFidelity,
                workspace: files
              })
            ]),
            ...codehost.map((c) => c.family),
            ...browser,
            ...(plan.web === true
              ? [WebTools.family(outbound, config.webSearch, { viewMedia: plan.mediaView !== undefined })]
              : []),
            ...media
          ],
          skills: plan.skills,
          userInteraction: plan.userInteraction,
          subagents: plan.subagents === true,
          ...(handlerId === undefined ? {} : { archive: archiveThrough(dispatch, run, principal, handlerId) })
        })
      })

      return { open }
    })
  ).pipe(Layer.provide(MediaViewTools.layer))
}

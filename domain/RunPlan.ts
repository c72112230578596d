/**
 * What a run captures when it starts (spec 4.1 rule 5, 9.4): later edits to
 * the agent or thread apply to the next run, never to this one.
 */
import { Schema } from "effect"
import { AgentApprovals, AgentSkill, CodehostCapability, ManagedWorkspace, RemoteWorkspace } from "./Agent.ts"
import { AttachmentRef } from "./Conversation.ts"
import { HttpConnectionConfig } from "./HttpConnection.ts"
import { HttpConnectionId, ResultHandlerId, ToolServerId } from "./Ids.ts"
import { PlannedMedia } from "./Media.ts"
import { ToolServerConfig } from "./ToolServer.ts"
import { WorkerPlan } from "./Worker.ts"

/**
 * A tool server as the run saw it; configVersion keys its warm MCP session.
 * Optional so plans stored before it was recorded still decode (they pool as version 0).
 */
export const PlannedToolServer = Schema.Struct({
  id: ToolServerId,
  name: Schema.String,
  configVersion: Schema.optionalKey(Schema.Number),
  config: ToolServerConfig
})
export type PlannedToolServer = typeof PlannedToolServer.Type

/** An HTTP connection as the run saw it; configVersion keys the spec cache. */
export const PlannedHttpConnection = Schema.Struct({
  id: HttpConnectionId,
  name: Schema.String,
  configVersion: Schema.Number,
  config: HttpConnectionConfig
})
export type PlannedHttpConnection = typeof PlannedHttpConnection.Type

/** capabilities.browser as the run started, with the export handler of each surface whose flag is on (spec 2.1.2). */
export const BrowserPlan = Schema.Struct({
  tabs: Schema.Boolean,
  files: Schema.Boolean,
  profileKey: Schema.optionalKey(Schema.String),
  /** exports.include.browserScreenshots is true: screenshots go to the export handler. */
  screenshotResultHandlerId: Schema.optionalKey(ResultHandlerId),
  /** exports.include.browserDownloads is true: downloads go to the export handler. */
  downloadResultHandlerId: Schema.optionalKey(ResultHandlerId)
})
export type BrowserPlan = typeof BrowserPlan.Type

export const RunPlan = Schema.Struct({
  /** The user's text for this turn. */
  input: Schema.String,
  /** The files attached to this turn, each a run-scoped artifact (absent: none). */
  attachments: Schema.optionalKey(Schema.Array(AttachmentRef)),
  /** Model route, e.g. `scripted` or `openai:gpt-4.1`. */
  route: Schema.String,
  /** Durable context frozen at start: agent blocks then thread blocks. */
  context: Schema.Array(Schema.String),
  /** The thread's part of `context` (the cached prefix the next turn may reuse); absent in plans stored before it was recorded. */
  threadContext: Schema.optionalKey(Schema.Array(Schema.String)),
  skills: Schema.Array(AgentSkill),
  userInteraction: Schema.Boolean,
  toolServers: Schema.Array(PlannedToolServer),
  httpConnections: Schema.Array(PlannedHttpConnection),
  approvals: Schema.NullOr(AgentApprovals),
  maxSteps: Schema.Number,
  maxDurationMs: Schema.NullOr(Schema.Number),
  budgetCents: Schema.NullOr(Schema.Number),
  outputSchema: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  streamProgress: Schema.Boolean,
  streamReasoning: Schema.Boolean,
  /** The thread's managed workspace (its spec pinned at thread creation), when it has one with tools. */
  workspace: Schema.optionalKey(ManagedWorkspace),
  /** The agent's remote workspace at run start (issue 31): its tools go to the environment's runners. */
  remoteWorkspace: Schema.optionalKey(RemoteWorkspace),
  /** artifacts.oversizedToolResults.resultHandlerId: archives over-cap results when there is no workspace to keep them. */
  oversizedResultHandlerId: Schema.optionalKey(ResultHandlerId),
  /** artifacts.exports.resultHandlerId, when workspace exports go to it (exports.include.workspaceExports is not false). */
  exportResultHandlerId: Schema.optionalKey(ResultHandlerId),
  /** artifacts.stream.urls is 'include-svc-signed': model-visible results carry temporary signed artifact URLs. */
  signedArtifactUrls: Schema.optionalKey(Schema.Boolean),
  /** What the organization's spend quota had left when the run started (absent without a quota). */
  spendAllowanceCents: Schema.optionalKey(Schema.Number),
  /** capabilities.subagents: the model may delegate tasks (delegate_task). */
  subagents: Schema.optionalKey(Schema.Boolean),
  /** capabilities.web: web_fetch, and web_search where the deployment has a provider (src/web/WebTools.ts). */
  web: Schema.optionalKey(Schema.Boolean),
  /** capabilities.browser: the managed browser in the thread's workspace (src/browser/), and where its artifacts go. */
  browser: Schema.optionalKey(BrowserPlan),
  /** capabilities.mediaView: view_media, its images shown to the model (`auto`) or answered about by a vision call (`analysis`). */
  mediaView: Schema.optionalKey(Schema.Literals(["analysis", "auto"])),
  /** capabilities.media: the kinds the run may generate, each with its route and price as the run started (src/media/). */
  media: Schema.optionalKey(Schema.Array(PlannedMedia)),
  /** artifacts.exports.resultHandlerId, when generated media go to it (exports.include.generatedDeliverables is not false). */
  mediaResultHandlerId: Schema.optionalKey(ResultHandlerId),
  /** capabilities.codehost as the run started: its tools are opened from the connection's state then (spec 4.8). */
  codehost: Schema.optionalKey(CodehostCapability),
  /** Set on a worker run: its tree, role and label (src/runs/Delegation.ts). */
  worker: Schema.optionalKey(WorkerPlan)
})
export type RunPlan = typeof RunPlan.Type

/** Without a run or agent cap, a run may take this many steps. */
export const DefaultMaxSteps = 50

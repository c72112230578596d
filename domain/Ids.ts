/**
 * Resource ids: the prefix of every kind, as the spec names them, and the
 * branded types of the ids the run engine passes around, so that a thread id
 * cannot be handed where a run id is expected. A brand only narrows the type:
 * ids from clients are not checked against their prefix (a wrong id is a
 * 404), so every schema here accepts any string. A branded id comes from a
 * decode (a request, a stored row) or from the IdGenerator, never a cast.
 */
import { Schema } from "effect"

export const IdPrefix = {
  agent: "agent_",
  thread: "thread_",
  run: "run_",
  worker: "wkr_",
  resultHandler: "rh_",
  interaction: "tar_",
  toolCall: "tc_",
  /** Stream part ids of a step's answer text and reasoning. */
  textPart: "txt_",
  reasoningPart: "rs_",
  request: "req_",
  organization: "org_",
  apiKey: "key_",
  secret: "sec_",
  secretContext: "sctx_",
  toolServer: "ts_",
  httpConnection: "hc_",
  hook: "hook_",
  followup: "fu_",
  incident: "inc_",
  /** A process of the deployment (a run's executor). */
  node: "node_"
} as const

export type IdKind = keyof typeof IdPrefix

export const AgentId = Schema.String.pipe(Schema.brand("AgentId"))
export type AgentId = typeof AgentId.Type

export const ThreadId = Schema.String.pipe(Schema.brand("ThreadId"))
export type ThreadId = typeof ThreadId.Type

export const RunId = Schema.String.pipe(Schema.brand("RunId"))
export type RunId = typeof RunId.Type

export const InteractionId = Schema.String.pipe(Schema.brand("InteractionId"))
export type InteractionId = typeof InteractionId.Type

/** `tc_...`, minted per call; the provider's own id (`call_...`, `toolu_...`) stays on the ToolCall as `providerId`. */
export const ToolCallId = Schema.String.pipe(Schema.brand("ToolCallId"))
export type ToolCallId = typeof ToolCallId.Type

export const FollowupId = Schema.String.pipe(Schema.brand("FollowupId"))
export type FollowupId = typeof FollowupId.Type

export const ToolServerId = Schema.String.pipe(Schema.brand("ToolServerId"))
export type ToolServerId = typeof ToolServerId.Type

export const HttpConnectionId = Schema.String.pipe(Schema.brand("HttpConnectionId"))
export type HttpConnectionId = typeof HttpConnectionId.Type

export const HookId = Schema.String.pipe(Schema.brand("HookId"))
export type HookId = typeof HookId.Type

/** The kinds whose ids are branded. */
interface BrandedIds {
  readonly agent: AgentId
  readonly thread: ThreadId
  readonly run: RunId
  readonly interaction: InteractionId
  readonly toolCall: ToolCallId
  readonly followup: FollowupId
  readonly toolServer: ToolServerId
  readonly httpConnection: HttpConnectionId
  readonly hook: HookId
}

/** The id type of a kind: its brand, or a plain string for kinds without one. */
export type IdOf<K extends IdKind> = K extends keyof BrandedIds ? BrandedIds[K] : string

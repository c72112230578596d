/**
 * Resource ids: the prefix of every kind, as the spec names them, and the
 * branded types of the ids the run engine passes around, so that a thread id
 * cannot be handed where a run id is expected. A brand only narrows the type
 * and accepts any string (stored rows, provider tool call ids). Ids a client
 * sends in a path or a query go through `ClientId`: their kind's prefix and
 * base62 characters, so an id that cannot exist (a NUL, a foreign prefix)
 * never reaches SQL. A branded id comes from a decode (a request, a stored
 * row) or from the IdGenerator, never a cast.
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
  codehostConnection: "chc_",
  hook: "hook_",
  followup: "fu_",
  incident: "inc_",
  /** A process of the deployment (a run's executor). */
  node: "node_",
  /** An uploaded file (Files API). */
  file: "file_",
  /** A stored artifact: an attachment, an export, an overflow (src/artifacts/). */
  artifact: "art_",
  /** A remote workspace's environment (issue 31) and one call of a run to its runners. */
  environment: "env_",
  environmentCall: "envc_",
  /** A browser profile's row (its page cursor; clients name profiles by key). */
  browserProfile: "bprof_"
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

export const FileId = Schema.String.pipe(Schema.brand("FileId"))
export type FileId = typeof FileId.Type

export const ArtifactId = Schema.String.pipe(Schema.brand("ArtifactId"))
export type ArtifactId = typeof ArtifactId.Type

export const SecretId = Schema.String.pipe(Schema.brand("SecretId"))
export type SecretId = typeof SecretId.Type

export const SecretContextId = Schema.String.pipe(Schema.brand("SecretContextId"))
export type SecretContextId = typeof SecretContextId.Type

export const ResultHandlerId = Schema.String.pipe(Schema.brand("ResultHandlerId"))
export type ResultHandlerId = typeof ResultHandlerId.Type

export const CodehostConnectionId = Schema.String.pipe(Schema.brand("CodehostConnectionId"))
export type CodehostConnectionId = typeof CodehostConnectionId.Type

/** `wkr_...`: a subagent's reference, the address of its worker entity. */
export const WorkerId = Schema.String.pipe(Schema.brand("WorkerId"))
export type WorkerId = typeof WorkerId.Type

export const ApiKeyId = Schema.String.pipe(Schema.brand("ApiKeyId"))
export type ApiKeyId = typeof ApiKeyId.Type

export const EnvironmentId = Schema.String.pipe(Schema.brand("EnvironmentId"))
export type EnvironmentId = typeof EnvironmentId.Type

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
  readonly file: FileId
  readonly artifact: ArtifactId
  readonly secret: SecretId
  readonly secretContext: SecretContextId
  readonly resultHandler: ResultHandlerId
  readonly codehostConnection: CodehostConnectionId
  readonly worker: WorkerId
  readonly apiKey: ApiKeyId
  readonly environment: EnvironmentId
}

/** The id type of a kind: its brand, or a plain string for kinds without one. */
export type IdOf<K extends IdKind> = K extends keyof BrandedIds ? BrandedIds[K] : string

/**
 * The annotation on an id check naming the resource a path id addresses: a
 * path id that fails it answers 404 `<resource>_not_found` (http/ApiMiddlewareHandlers.ts).
 */
export const NotFoundResource = "svc/notFoundResource"

/** Base62 as minted (22 characters), with room for ids of other lengths. */
const idBody = "[0-9A-Za-z]{1,64}"

/** An id of `kind` as a client may send it; `resource` names the `<resource>_not_found` code. */
export const isIdOf = (kind: IdKind, resource: string) =>
  Schema.isPattern(new RegExp(`^${IdPrefix[kind]}${idBody}$`), {
    message: `must be an id starting with '${IdPrefix[kind]}' followed by letters and digits`,
    [NotFoundResource]: resource
  })

/** The shape of any id this service mints, whatever its kind (page cursors carry one). */
export const isAnyId = Schema.isPattern(new RegExp(`^[a-z]+_${idBody}$`), {
  message: "must be an id this API returned"
})

/** Ids as clients send them in paths and query strings. */
export const ClientId = {
  agent: AgentId.check(isIdOf("agent", "agent")),
  thread: ThreadId.check(isIdOf("thread", "thread")),
  run: RunId.check(isIdOf("run", "run")),
  worker: WorkerId.check(isIdOf("worker", "worker")),
  interaction: InteractionId.check(isIdOf("interaction", "interaction")),
  followup: FollowupId.check(isIdOf("followup", "followup")),
  toolServer: ToolServerId.check(isIdOf("toolServer", "tool_server")),
  httpConnection: HttpConnectionId.check(isIdOf("httpConnection", "http_connection")),
  codehostConnection: CodehostConnectionId.check(isIdOf("codehostConnection", "codehost_connection")),
  hook: HookId.check(isIdOf("hook", "tool_approval_hook")),
  resultHandler: ResultHandlerId.check(isIdOf("resultHandler", "result_handler")),
  secret: SecretId.check(isIdOf("secret", "secret")),
  secretContext: SecretContextId.check(isIdOf("secretContext", "secret_context")),
  file: FileId.check(isIdOf("file", "file")),
  artifact: ArtifactId.check(isIdOf("artifact", "artifact")),
  apiKey: ApiKeyId.check(isIdOf("apiKey", "api_key")),
  environment: EnvironmentId.check(isIdOf("environment", "environment"))
}

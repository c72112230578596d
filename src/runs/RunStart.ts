/**
 * Starting a run (spec 4.2 messages, 4.3): the input, band, data handling,
 * time zone and output schema are checked, and the plan is captured: what the
 * run will use, frozen now (agent and thread context, skills, tool servers and
 * HTTP connections as configured at this moment, caps). The thread, its
 * agent and what the thread's previous turn was built with come in one read
 * (the thread's context is a cached prefix: ../threads/ContextPrefix.ts).
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { AgentConfig, ManagedWorkspace } from "../../domain/Agent.ts"
import {
  type Conflict,
  type InsufficientQuota,
  InvalidRequest,
  type NotFound,
  type PayloadTooLarge,
  type PermissionDenied,
  type RateLimited,
  type Unavailable
} from "../../domain/Errors.ts"
import type { ThreadId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import { type MessageInput, ZeroUsage } from "../../domain/Run.ts"
import {
  type BrowserPlan,
  DefaultMaxSteps,
  type PlannedHttpConnection,
  type PlannedToolServer,
  type RunPlan
} from "../../domain/RunPlan.ts"
import { SpendQuota } from "../access/SpendQuota.ts"
import { Files } from "../artifacts/Files.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import * as MediaOffer from "../media/MediaOffer.ts"
import { Bands } from "../model/Bands.ts"
import type { NewRunRow } from "../store/RunRepo.ts"
import { threadContextFor } from "../threads/ContextPrefix.ts"
import { Threads } from "../threads/Threads.ts"
import { isIanaZone, nowIso } from "../Time.ts"
import { HttpConnections } from "../tools/HttpConnections.ts"
import { ToolServers } from "../tools/ToolServers.ts"
import { offerOf, strictRefusal } from "../web/WebTools.ts"
import * as Attachments from "./Attachments.ts"
import * as StructuredOutput from "./StructuredOutput.ts"

export type StartError =
  | InvalidRequest
  | NotFound
  | PermissionDenied
  | Conflict
  | RateLimited
  | InsufficientQuota
  | PayloadTooLarge
  | Unavailable

export interface PreparedStart {
  readonly row: NewRunRow & { readonly plan: RunPlan }
  /** The message text, when it may be held as a follow-up of an active run. */
  readonly holdableText: string | null
}

/**
 * Only a message that is nothing but text can join a running turn: options and
 * metadata belong to a run of their own, and a held message would lose them.
 */
const isPlainText = (input: MessageInput): boolean => {
  const { input: body, idempotencyKey: _key, ...options } = input
  const textOnly = typeof body === "string" || (body.attachments === undefined || body.attachments.length === 0)
  return textOnly && Object.keys(options).length === 0
}

/** A managed workspace the run opens: one whose spec offers the file tools or the shell. */
/** capabilities.browser as the plan carries it; screenshots and downloads go to the export handler only when their flag is true. */
const browserPlanOf = (
  browser: AgentConfig["capabilities"]["browser"],
  exports: AgentConfig["artifacts"]["exports"]
): { readonly browser?: BrowserPlan } => {
  if (browser === undefined || browser === false) return {}
  const options = browser === true ? {} : browser
  const handler = exports?.resultHandlerId
  return {
    browser: {
      tabs: options.tabs === true,
      files: options.files === true,
      ...(options.authenticated === undefined ? {} : { profileKey: options.authenticated.profileKey }),
      ...(handler !== undefined && exports?.include?.browserScreenshots === true
        ? { screenshotResultHandlerId: handler }
        : {}),
      ...(handler !== undefined && exports?.include?.browserDownloads === true
        ? { downloadResultHandlerId: handler }
        : {})
    }
  }
}

const workspaceWithTools = (spec: ManagedWorkspace | null): spec is ManagedWorkspace =>
  spec !== null && (spec.filesystem !== false || spec.shell === true)

const inputText = (input: MessageInput["input"]) =>
  Effect.gen(function*() {
    if (typeof input === "string") {
      if (input.length === 0) return yield* InvalidRequest.forField("input", "input must not be empty.")
      return input
    }
    if ((input.attachments?.length ?? 0) > 0) return input.text ?? ""
    if (input.text === undefined || input.text.length === 0) {
      return yield* InvalidRequest.forField(
        "input.text",
        "Object input needs non-empty text or at least one attachment."
      )
    }
    return input.text
  })

export class RunStart extends Context.Service<RunStart, {
  readonly prepare: (
    principal: Principal,
    threadId: ThreadId,
    input: MessageInput,
    idempotencyKey: string | undefined
  ) => Effect.Effect<
    PreparedStart,
    InvalidRequest | NotFound | PermissionDenied | InsufficientQuota | PayloadTooLarge | Unavailable
  >
}>()("svc/RunStart") {
  static readonly layer = Layer.effect(RunStart)(
    Effect.gen(function*() {
      const threads = yield* Threads
      const bands = yield* Bands
      const toolServers = yield* ToolServers
      const httpConnections = yield* HttpConnections
      const config = yield* ServiceConfig
      const ids = yield* IdGenerator
      const quota = yield* SpendQuota
      const files = yield* Files

      const prepare = Effect.fn("RunStart.prepare")(function*(
        principal: Principal,
        threadId: ThreadId,
        input: MessageInput,
        idempotencyKey: string | undefined
      ) {
        const { thread: threadRow, agent: agentRow, previous } = yield* threads.getWithAgent(principal, threadId)
        const thread = threadRow.thread
        const agent = agentRow.agent
        const text = yield* inputText(input.input)

        const band = input.band ?? thread.band ?? agent.band
        if (!bands.isAvailable(band)) {
          return yield* InvalidRequest.forField(
            "band",
            `Band '${band}' is not available on this deployment (see GET /v1/bands).`
          )
        }
        const inheritedStrict = agent.policies.dataHandling === "strict" || thread.dataHandling === "strict"
        if (inheritedStrict && input.dataHandling === "standard") {
          return yield* InvalidRequest.forField(
            "dataHandling",
            "This agent or thread requires strict data handling; a run cannot relax it to 'standard'."
          )
        }
        const dataHandling = inheritedStrict || input.dataHandling === "strict" ? "strict" : "standard"
        if (dataHandling === "strict" && !bands.isStrictAvailable(band)) {
          return yield* InvalidRequest.forField(
            "dataHandling",
            `Strict data handling is required but band '${band}' has no verified zero-retention route.`,
            "strict_data_handling_unavailable"
          )
        }
        const webStrict = dataHandling === "strict" && agent.capabilities.web === true
          ? strictRefusal(offerOf(config.webSearch))
          : undefined
        if (webStrict !== undefined) {
          return yield* InvalidRequest.forField("dataHandling", webStrict, "strict_data_handling_unavailable")
        }
        // capabilities.media: the kinds the deployment has now (a route removed since is refused with its name).
        const mediaOffer = MediaOffer.offerOf(config.media)
        const media = MediaOffer.mediaRefusal(agent.capabilities.media, mediaOffer, dataHandling === "strict")
        if (media !== undefined) {
          return yield* InvalidRequest.forField(
            media.code === "strict_data_handling_unavailable" ? "dataHandling" : media.field,
            media.message,
            media.code
          )
        }
        const plannedMedia = MediaOffer.planned(agent.capabilities.media, mediaOffer)
        const timeZone = input.timeZone ?? thread.timeZone ?? "UTC"
        if (!isIanaZone(timeZone)) {
          return yield* InvalidRequest.forField("timeZone", `'${timeZone}' is not a valid IANA time zone.`)
        }
        if (input.outputSchema !== undefined) {
          const problem = yield* StructuredOutput.schemaProblem(input.outputSchema)
          if (problem !== undefined) return yield* InvalidRequest.forField("outputSchema", `${problem}.`)
        }

        const planned: Array<PlannedToolServer> = []
        for (const serverId of agent.capabilities.mcp?.toolServerIds ?? []) {
          const loaded = yield* toolServers.load(principal, serverId).pipe(Effect.option)
          if (Option.isSome(loaded)) {
            planned.push({
              id: serverId,
              name: loaded.value.row.name,
              configVersion: loaded.value.row.configVersion,
              config: loaded.value.config
            })
          }
        }
        const plannedHttp: Array<PlannedHttpConnection> = []
        for (const connectionId of agent.capabilities.http?.connectionIds ?? []) {
          const loaded = yield* httpConnections.load(principal, connectionId).pipe(Effect.option)
          if (Option.isSome(loaded)) {
            const { row, config: connection } = loaded.value
            plannedHttp.push({ id: connectionId, name: row.name, configVersion: row.configVersion, config: connection })
          }
        }
        // A spent quota refuses the run before anything runs (one read, only when a quota applies).
        const allowance = yield* quota.allowance(principal.organizationId)
        const route = config.bands[band].route ?? "scripted"
        const threadContext = threadContextFor({
          current: thread.context.map((b) => b.content),
          band,
          refreshRequestedAt: threadRow.contextRefreshAt,
          previous,
          nowMs: yield* Clock.currentTimeMillis
        })
        const oversizedHandler = agent.artifacts.oversizedToolResults?.resultHandlerId
        const exportHandler = agent.artifacts.exports?.resultHandlerId
        const plan: RunPlan = {
          input: text,
          route,
          context: [...agent.context.map((b) => b.content), ...threadContext],
          threadContext,
          skills: agent.capabilities.skills ?? [],
          userInteraction: agent.capabilities.userInteraction === true,
          toolServers: planned,
          httpConnections: plannedHttp,
          approvals: agent.approvals,
          maxSteps: input.maxSteps ?? agent.policies.maxStepsDefault ?? DefaultMaxSteps,
          maxDurationMs: input.maxDurationMs ?? agent.policies.maxDurationMsDefault,
          budgetCents: input.budgetCents ?? null,
          outputSchema: input.outputSchema ?? null,
          streamProgress: input.streamProgress === true,
          streamReasoning: input.streamReasoning === true,
          ...(agent.capabilities.subagents === true ? { subagents: true } : {}),
          ...(agent.capabilities.web === true ? { web: true } : {}),
          ...browserPlanOf(agent.capabilities.browser, agent.artifacts.exports),
          ...(agent.capabilities.mediaView === undefined
            ? {}
            : { mediaView: agent.capabilities.mediaView.output ?? "auto" }),
          ...(plannedMedia.length === 0 ? {} : { media: plannedMedia }),
          ...(plannedMedia.length === 0 || exportHandler === undefined ||
              agent.artifacts.exports?.include?.generatedDeliverables === false
            ? {}
            : { mediaResultHandlerId: exportHandler }),
          ...(agent.capabilities.codehost === undefined ? {} : { codehost: agent.capabilities.codehost }),
          ...(workspaceWithTools(threadRow.workspaceSpec) ? { workspace: threadRow.workspaceSpec } : {}),
          ...(agent.workspace?.type === "remote" && agent.workspace.filesystem !== false
            ? { remoteWorkspace: agent.workspace }
            : {}),
          ...(oversizedHandler === undefined ? {} : { oversizedResultHandlerId: oversizedHandler }),
          ...(exportHandler === undefined || agent.artifacts.exports?.include?.workspaceExports === false
            ? {}
            : { exportResultHandlerId: exportHandler }),
          ...(agent.artifacts.stream?.urls === "include-svc-signed" ? { signedArtifactUrls: true } : {}),
          ...(allowance === undefined ? {} : { spendAllowanceCents: allowance })
        }
        const now = yield* nowIso
        const id = yield* ids.make("run")
        const items = typeof input.input === "string" ? [] : input.input.attachments ?? []
        const hasWorkspace = plan.workspace !== undefined && plan.workspace.filesystem !== false
        const attachments = items.length === 0
          ? []
          : yield* Attachments.resolve(files, principal, items, { runId: id, threadId, hasWorkspace })
        const row: PreparedStart["row"] = {
          id,
          createdAt: now,
          organizationId: principal.organizationId,
          workspaceId: principal.workspaceId,
          plan: attachments.length === 0 ? plan : { ...plan, attachments },
          idempotencyKey: idempotencyKey ?? null,
          run: {
            id,
            object: "run",
            threadId,
            agentId: agent.id,
            status: "queued",
            terminalReason: null,
            usage: ZeroUsage,
            config: { band, mediaFidelity: agent.policies.mediaFidelity, dataHandling, timeZone },
            metadata: input.metadata ?? {},
            createdAt: now,
            startedAt: null,
            completedAt: null
          }
        }
        return { row, holdableText: isPlainText(input) ? text : null } satisfies PreparedStart
      })

      return { prepare }
    })
  )
}

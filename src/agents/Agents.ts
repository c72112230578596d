/** Agents: create, validate, read, list, update and delete (spec 4.1). */
import { Context, Effect, Layer, Option } from "effect"
import { type Agent, type AgentConfig, agentConfigOf, type AgentCreate, type AgentPatch } from "../../domain/Agent.ts"
import { InvalidRequest, type NotFound, type PermissionDenied } from "../../domain/Errors.ts"
import type { AgentId } from "../../domain/Ids.ts"
import { applyMetadataPatch } from "../../domain/Metadata.ts"
import type { PageOf, PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { canonicalJson } from "../CanonicalJson.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { offerOf as mediaOfferOf } from "../media/MediaOffer.ts"
import { Bands } from "../model/Bands.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { requireOwned } from "../Ownership.ts"
import { AgentRepo, type AgentRow } from "../store/AgentRepo.ts"
import { pageWindow, toPage } from "../store/Cursor.ts"
import { ResourceStore } from "../store/ResourceStore.ts"
import { nowIso } from "../Time.ts"
import { offerOf } from "../web/WebTools.ts"
import { ThreadWorkspaces } from "../workspace/ThreadWorkspaces.ts"
import { applyPatch, buildConfig, checkConfig } from "./AgentConfigRules.ts"
import { checkReferences, checkSeedUrl } from "./AgentReferences.ts"

export class Agents extends Context.Service<Agents, {
  /** PermissionDenied: `workspace.environmentId` names an environment of another workspace. */
  readonly create: (principal: Principal, input: AgentCreate) => Effect.Effect<Agent, InvalidRequest | PermissionDenied>
  readonly validate: (
    principal: Principal,
    input: AgentCreate
  ) => Effect.Effect<{ readonly valid: true }, InvalidRequest | PermissionDenied>
  readonly get: (principal: Principal, id: AgentId) => Effect.Effect<Agent, NotFound | PermissionDenied>
  /** The owned row (organization and workspace included), for other services. */
  readonly getRow: (principal: Principal, id: AgentId) => Effect.Effect<AgentRow, NotFound | PermissionDenied>
  readonly list: (principal: Principal, page: PageRequest) => Effect.Effect<PageOf<Agent>, InvalidRequest>
  readonly update: (
    principal: Principal,
    id: AgentId,
    patch: AgentPatch
  ) => Effect.Effect<Agent, InvalidRequest | NotFound | PermissionDenied>
  readonly remove: (
    principal: Principal,
    id: AgentId
  ) => Effect.Effect<
    { readonly id: AgentId; readonly object: "agent"; readonly deleted: true },
    NotFound | PermissionDenied
  >
}>()("svc/Agents") {
  static readonly layer = Layer.effect(Agents)(
    Effect.gen(function*() {
      const repo = yield* AgentRepo
      const workspaces = yield* ThreadWorkspaces
      const bands = yield* Bands
      const ids = yield* IdGenerator
      const outbound = yield* Outbound

      const store = yield* ResourceStore
      const deployment = {
        isBandAvailable: bands.isAvailable,
        artifactStorage: (yield* ServiceConfig).artifacts.store.kind !== "none",
        codehost: Option.isSome((yield* ServiceConfig).codehost),
        allowPrivateUrls: (yield* ServiceConfig).allowPrivateUrls,
        runtimes: (yield* ServiceConfig).hostRuntimes,
        web: offerOf((yield* ServiceConfig).webSearch),
        media: mediaOfferOf((yield* ServiceConfig).media)
      }

      /** Cross-field rules, then references to adapters of the caller's workspace, then the seed URL (`previous`: on update). */
      const checked = (
        principal: Principal,
        config: AgentConfig | InvalidRequest,
        previous?: AgentConfig
      ): Effect.Effect<AgentConfig, InvalidRequest | PermissionDenied> => {
        if (config instanceof InvalidRequest) return Effect.fail(config)
        const broken = checkConfig(config, deployment)
        if (broken !== undefined) return Effect.fail(broken)
        return Effect.as(
          Effect.andThen(checkReferences(store, principal, config), checkSeedUrl(outbound, config, previous)),
          config
        )
      }

      const getRow = (principal: Principal, id: AgentId) =>
        repo.find(id).pipe(Effect.flatMap(requireOwned<AgentRow>(principal, "agent", id)))

      return {
        create: Effect.fn("Agents.create")(function*(principal: Principal, input: AgentCreate) {
          const config = yield* checked(principal, buildConfig(input))
          const now = yield* nowIso
          const agent: Agent = {
            id: yield* ids.make("agent"),
            object: "agent",
            ...config,
            metadata: input.metadata ?? {},
            configVersion: 1,
            createdAt: now,
            updatedAt: now
          }
          yield* repo.insert({
            id: agent.id,
            createdAt: now,
            agent,
            organizationId: principal.organizationId,
            workspaceId: principal.workspaceId
          })
          return agent
        }),
        validate: Effect.fn("Agents.validate")(function*(principal: Principal, input: AgentCreate) {
          yield* checked(principal, buildConfig(input))
          return { valid: true as const }
        }),
        get: (principal, id) => Effect.map(getRow(principal, id), (row) => row.agent),
        getRow,
        list: Effect.fn("Agents.list")(function*(principal: Principal, page: PageRequest) {
          const { limit, after } = yield* pageWindow(page)
          const rows = yield* repo.list(principal.organizationId, principal.workspaceId, limit, after)
          return toPage(rows, limit, (row) => row.agent)
        }),
        update: Effect.fn("Agents.update")(function*(principal: Principal, id: AgentId, patch: AgentPatch) {
          const { agent } = yield* getRow(principal, id)
          const config = yield* checked(principal, applyPatch(agent, patch), agentConfigOf(agent))
          const metadata = applyMetadataPatch(agent.metadata, patch.metadata)
          if (typeof metadata === "string") return yield* InvalidRequest.forField("metadata", metadata)
          const before = canonicalJson(agentConfigOf(agent))
          const changed = canonicalJson(config) !== before
          if (!changed && canonicalJson(metadata) === canonicalJson(agent.metadata)) return agent
          const next: Agent = {
            ...agent,
            ...config,
            metadata,
            configVersion: changed ? agent.configVersion + 1 : agent.configVersion,
            updatedAt: yield* nowIso
          }
          yield* repo.update(next)
          return next
        }),
        remove: Effect.fn("Agents.remove")(function*(principal: Principal, id: AgentId) {
          yield* getRow(principal, id)
          // Threads go with their agent (ON DELETE CASCADE): no orphans; nor are their workspaces' files.
          const withWorkspace = yield* workspaces.threadsOf(id)
          yield* repo.remove(id)
          yield* workspaces.remove(withWorkspace)
          return { id, object: "agent" as const, deleted: true as const }
        })
      }
    })
  ).pipe(Layer.provide([AgentRepo.layer, Bands.layer, ResourceStore.layer]))
}

/**
 * Agent create / update / validate check that every adapter the configuration
 * references exists in the caller's workspace (400 naming the field), and
 * that the URL a managed workspace is seeded from passes the outbound URL
 * policy (400 url_not_allowed). Code-hosting connections have no resource in
 * this service yet, so their ids are only checked for shape.
 */
import { Effect, Option } from "effect"
import type { AgentConfig } from "../../domain/Agent.ts"
import { InvalidRequest } from "../../domain/Errors.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { AdapterTable } from "../store/Migrations.ts"
import type { Outbound } from "../outbound/Outbound.ts"
import type { ResourceStoreShape } from "../store/ResourceStore.ts"

interface Reference {
  readonly table: AdapterTable
  readonly what: string
  readonly id: string
  readonly field: string
}

const references = (config: AgentConfig): ReadonlyArray<Reference> => {
  const refs: Array<Reference> = []
  config.capabilities.mcp?.toolServerIds.forEach((id, i) =>
    refs.push({ table: "tool_servers", what: "tool server", id, field: `capabilities.mcp.toolServerIds[${i}]` })
  )
  config.capabilities.http?.connectionIds.forEach((id, i) =>
    refs.push({ table: "http_connections", what: "HTTP connection", id, field: `capabilities.http.connectionIds[${i}]` })
  )
  const hookId = config.approvals?.toolExecution?.hookId
  if (hookId !== undefined) {
    refs.push({ table: "tool_approval_hooks", what: "tool approval hook", id: hookId, field: "approvals.toolExecution.hookId" })
  }
  const exportsHandler = config.artifacts.exports?.resultHandlerId
  if (exportsHandler !== undefined) {
    refs.push({ table: "result_handlers", what: "result handler", id: exportsHandler, field: "artifacts.exports.resultHandlerId" })
  }
  const overflowHandler = config.artifacts.oversizedToolResults?.resultHandlerId
  if (overflowHandler !== undefined) {
    refs.push({
      table: "result_handlers",
      what: "result handler",
      id: overflowHandler,
      field: "artifacts.oversizedToolResults.resultHandlerId"
    })
  }
  if (config.workspace?.type === "managed") {
    config.workspace.secretContexts?.forEach((id, i) =>
      refs.push({ table: "secret_contexts", what: "secret context", id, field: `workspace.secretContexts[${i}]` })
    )
  }
  return refs
}

export const checkReferences = (store: ResourceStoreShape, principal: Principal, config: AgentConfig) =>
  Effect.forEach(references(config), (ref) =>
    Effect.flatMap(store.find(ref.table, ref.id), (found) =>
      Option.isSome(found) && found.value.organizationId === principal.organizationId &&
        found.value.workspaceId === principal.workspaceId
        ? Effect.void
        : Effect.fail(InvalidRequest.forField(ref.field, `${ref.field}: no ${ref.what} '${ref.id}' in this workspace.`))), {
    discard: true
  })

const seedUrlOf = (config: AgentConfig | undefined): string | undefined =>
  config?.workspace?.type === "managed" ? config.workspace.seed?.url : undefined

/** `workspace.seed.url` passes the outbound URL policy; on update, only when it changed (`previous`: the stored config). */
export const checkSeedUrl = (outbound: Outbound["Service"], config: AgentConfig, previous?: AgentConfig): Effect.Effect<void, InvalidRequest> => {
  const url = seedUrlOf(config)
  return url === undefined || url === seedUrlOf(previous) ? Effect.void : Effect.asVoid(outbound.checkUrl(url, "workspace.seed.url"))
}

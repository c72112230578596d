/**
 * Agent create / update / validate check that every adapter the configuration
 * references exists in the caller's workspace (400 naming the field), and
 * that the URL a managed workspace is seeded from passes the outbound URL
 * policy (400 url_not_allowed). A code-hosting grant's repositories must be
 * within its connection's grant (they only narrow it). A remote workspace's
 * environment must be one of the caller's workspace (403 when of another).
 */
import { Effect, Option, Schema } from "effect"
import type { AgentConfig } from "../../domain/Agent.ts"
import { ConnectionState } from "../../domain/Codehost.ts"
import { InvalidRequest, type PermissionDenied } from "../../domain/Errors.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { Outbound } from "../outbound/Outbound.ts"
import { requireOwned } from "../Ownership.ts"
import type { AdapterTable, ResourceStoreShape } from "../store/ResourceStore.ts"

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
    refs.push({
      table: "http_connections",
      what: "HTTP connection",
      id,
      field: `capabilities.http.connectionIds[${i}]`
    })
  )
  const hookId = config.approvals?.toolExecution?.hookId
  if (hookId !== undefined) {
    refs.push({
      table: "tool_approval_hooks",
      what: "tool approval hook",
      id: hookId,
      field: "approvals.toolExecution.hookId"
    })
  }
  const exportsHandler = config.artifacts.exports?.resultHandlerId
  if (exportsHandler !== undefined) {
    refs.push({
      table: "result_handlers",
      what: "result handler",
      id: exportsHandler,
      field: "artifacts.exports.resultHandlerId"
    })
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
  const codehost = config.capabilities.codehost
  if (codehost !== undefined) {
    refs.push({
      table: "codehost_connections",
      what: "code-hosting connection",
      id: codehost.connectionId,
      field: "capabilities.codehost.connectionId"
    })
  }
  if (config.workspace?.type === "managed") {
    config.workspace.secretContexts?.forEach((id, i) =>
      refs.push({ table: "secret_contexts", what: "secret context", id, field: `workspace.secretContexts[${i}]` })
    )
  }
  return refs
}

const decodeConnection = Schema.decodeUnknownEffect(ConnectionState)

/** `capabilities.codehost.repositories` only narrow what the connection grants. */
const checkCodehostRepositories = (
  store: ResourceStoreShape,
  config: AgentConfig
): Effect.Effect<void, InvalidRequest> => {
  const grant = config.capabilities.codehost
  if (grant?.repositories === undefined) return Effect.void
  const repositories = grant.repositories
  return Effect.gen(function*() {
    const row = yield* store.find("codehost_connections", grant.connectionId)
    if (Option.isNone(row)) return
    const state = yield* Effect.orDie(decodeConnection(row.value.config))
    const granted = new Set(state.access.repositories.map((r) => r.toLowerCase()))
    for (const [i, repository] of repositories.entries()) {
      if (!granted.has(repository.toLowerCase())) {
        return yield* InvalidRequest.forField(
          `capabilities.codehost.repositories[${i}]`,
          `The connection does not grant '${repository}'; repositories can only narrow its grant (see its access.repositories).`
        )
      }
    }
  })
}

export const checkReferences = (store: ResourceStoreShape, principal: Principal, config: AgentConfig) =>
  Effect.andThen(
    checkReferenceIds(store, principal, config),
    Effect.andThen(checkEnvironment(store, principal, config), checkCodehostRepositories(store, config))
  )

/**
 * `workspace.environmentId` (issue 31): 400 naming the field when no such environment exists,
 * 403 when it belongs to another workspace (unlike the adapters above, which read 400 either way).
 */
const checkEnvironment = (
  store: ResourceStoreShape,
  principal: Principal,
  config: AgentConfig
): Effect.Effect<void, InvalidRequest | PermissionDenied> => {
  if (config.workspace?.type !== "remote") return Effect.void
  const id = config.workspace.environmentId
  return Effect.flatMap(store.find("environments", id), (found) =>
    Option.isNone(found)
      ? Effect.fail(
        InvalidRequest.forField(
          "workspace.environmentId",
          `workspace.environmentId: no environment '${id}' in this workspace.`
        )
      )
      : Effect.asVoid(requireOwned(principal, "environment", id)(found)).pipe(Effect.catchTag("NotFound", Effect.die)))
}

const checkReferenceIds = (store: ResourceStoreShape, principal: Principal, config: AgentConfig) =>
  Effect.forEach(
    references(config),
    (ref) =>
      Effect.flatMap(store.find(ref.table, ref.id), (found) =>
        Option.isSome(found) && found.value.organizationId === principal.organizationId &&
          found.value.workspaceId === principal.workspaceId
          ? Effect.void
          : Effect.fail(
            InvalidRequest.forField(ref.field, `${ref.field}: no ${ref.what} '${ref.id}' in this workspace.`)
          )),
    {
      discard: true
    }
  )

const seedUrlOf = (config: AgentConfig | undefined): string | undefined =>
  config?.workspace?.type === "managed" ? config.workspace.seed?.url : undefined

/** `workspace.seed.url` passes the outbound URL policy; on update, only when it changed (`previous`: the stored config). */
export const checkSeedUrl = (
  outbound: Outbound["Service"],
  config: AgentConfig,
  previous?: AgentConfig
): Effect.Effect<void, InvalidRequest> => {
  const url = seedUrlOf(config)
  return url === undefined || url === seedUrlOf(previous)
    ? Effect.void
    : Effect.asVoid(outbound.checkEgressUrl(url, "workspace.seed.url"))
}

/**
 * Tool servers (spec 4.6): registration rules and the `test` route (a real
 * MCP handshake over the registered transport and auth, tools/list, the
 * allow/block filter, close).
 */
import { Clock, Context, Effect, Layer, Redacted } from "effect"
import { InvalidRequest, UpstreamFailed } from "../../domain/Errors.ts"
import { ToolServerId } from "../../domain/Ids.ts"
import type { PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { ToolRef } from "../../domain/ToolPolicy.ts"
import {
  McpProtocolVersion,
  type ToolServer,
  ToolServerConfig,
  type ToolServerCreate,
  type ToolServerPatch
} from "../../domain/ToolServer.ts"
import { canonicalJson } from "../CanonicalJson.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { Secrets } from "../secrets/Secrets.ts"
import { ResourceStore } from "../store/ResourceStore.ts"
import { agentsReferencing, makeCrud, mergeMetadata, rowFields } from "./AdapterCrud.ts"
import { maskCredentials } from "./CredentialMask.ts"
import * as McpClient from "./McpClient.ts"
import { DefaultPolicy, namespacedToolName, resolveExclusive, resolvePolicy } from "./ToolPolicyRules.ts"

/** The tools a server exposes after the allow/block filter, with their model-facing names. */
export const exposedTools = (
  config: Pick<ToolServerConfig, "allowedTools" | "blockedTools">,
  serverName: string,
  advertised: ReadonlyArray<string>
): ReadonlyArray<ToolRef> => {
  const allowed = config.allowedTools === null ? undefined : new Set(config.allowedTools)
  const blocked = new Set(config.blockedTools ?? [])
  const refs: Array<ToolRef> = []
  for (const name of advertised) {
    if (allowed !== undefined && !allowed.has(name)) continue
    if (blocked.has(name)) continue
    const namespacedName = namespacedToolName("mcp", serverName, name)
    if (namespacedName !== undefined) refs.push({ name, namespacedName })
  }
  return refs
}

const make = Effect.gen(function*() {
  const store = yield* ResourceStore
  const ids = yield* IdGenerator
  const secrets = yield* Secrets
  const outbound = yield* Outbound
  const crud = makeCrud(store, ids, {
    table: "tool_servers",
    idKind: "toolServer",
    id: ToolServerId,
    resource: "tool_server",
    uniqueNames: true,
    config: ToolServerConfig,
    view: (row, c): ToolServer => ({
      ...rowFields(row),
      object: "tool_server",
      ...c
    })
  })

  const lists = (
    current: readonly [ReadonlyArray<string> | null, ReadonlyArray<string> | null],
    patch: readonly [ReadonlyArray<string> | null | undefined, ReadonlyArray<string> | null | undefined]
  ) => {
    const resolved = resolveExclusive(["allowedTools", "blockedTools"], current, patch)
    return resolved instanceof InvalidRequest ? Effect.fail(resolved) : Effect.succeed(resolved)
  }

  /** The server's bearer token, opened now (none without auth). */
  const credentialsOf = (principal: Principal, config: ToolServerConfig) =>
    config.auth.type === "bearer"
      ? Effect.map(secrets.reveal(principal, config.auth.secretId, "auth.secretId"), (token) => [Redacted.value(token)])
      : Effect.succeed([])

  return {
    create: Effect.fn("ToolServers.create")(function*(principal: Principal, input: ToolServerCreate) {
      const url = yield* outbound.checkUrl(input.url, "url")
      const [allowedTools, blockedTools] = yield* lists([null, null], [input.allowedTools, input.blockedTools])
      const policy = yield* resolvePolicy(principal, DefaultPolicy, input, secrets.requireRef)
      return yield* crud.create(principal, {
        name: input.name,
        config: {
          transport: input.transport,
          url: url.toString(),
          allowedTools,
          blockedTools,
          protocolVersion: McpProtocolVersion,
          ...policy
        },
        metadata: input.metadata ?? {},
        sealed: null
      })
    }),
    get: (principal: Principal, id: ToolServerId) => crud.get(principal, id),
    list: (principal: Principal, page: PageRequest) => crud.list(principal, page),
    update: Effect.fn("ToolServers.update")(function*(principal: Principal, id: ToolServerId, patch: ToolServerPatch) {
      const current = yield* crud.load(principal, id)
      const c = current.config
      const url = patch.url === undefined ? c.url : (yield* outbound.checkUrl(patch.url, "url")).toString()
      const [allowedTools, blockedTools] = yield* lists([c.allowedTools, c.blockedTools], [
        patch.allowedTools,
        patch.blockedTools
      ])
      const policy = yield* resolvePolicy(principal, c, patch, secrets.requireRef)
      const next: ToolServerConfig = {
        transport: patch.transport ?? c.transport,
        url,
        allowedTools,
        blockedTools,
        protocolVersion: c.protocolVersion,
        ...policy
      }
      const name = patch.name ?? current.row.name
      const metadata = yield* mergeMetadata(current.row.metadata, patch.metadata)
      const structural = name !== current.row.name || canonicalJson(next) !== canonicalJson(c)
      return yield* crud.save(principal, current, { name, config: next, metadata, sealed: null }, structural)
    }),
    remove: (principal: Principal, id: ToolServerId) =>
      crud.remove(
        principal,
        id,
        () => agentsReferencing(store, principal, [{ capabilities: { mcp: { toolServerIds: [id] } } }])
      ),
    requireRef: crud.requireRef,
    load: crud.load,
    /** `POST /v1/tool-servers/:id/test`: any failure to connect, initialize or list is 502 service_unavailable. */
    test: Effect.fn("ToolServers.test")(function*(principal: Principal, id: ToolServerId) {
      const { row, config } = yield* crud.load(principal, id)
      const credentials = yield* credentialsOf(principal, config)
      const headers = credentials.length === 0 ? {} : { authorization: `Bearer ${credentials[0]}` }
      const started = yield* Clock.currentTimeMillis
      const tools = yield* Effect.scoped(
        Effect.flatMap(
          McpClient.connect(outbound.fetch, {
            transport: config.transport,
            url: config.url,
            headers,
            timeoutMs: config.requestTimeoutMs
          }),
          (client) => McpClient.listTools(client, config.requestTimeoutMs)
        )
      ).pipe(
        Effect.mapError((e) =>
          new UpstreamFailed({
            code: "service_unavailable",
            message: `Tool server test failed: ${maskCredentials(e.message, credentials)}`
          })
        )
      )
      const latencyMs = (yield* Clock.currentTimeMillis) - started
      const exposed = exposedTools(config, row.name, tools.map((t) => t.name))
      return { connected: true as const, latencyMs, toolCount: exposed.length, tools: exposed }
    })
  }
})

export class ToolServers extends Context.Service<ToolServers, Effect.Success<typeof make>>()("svc/ToolServers") {
  static readonly layer = Layer.effect(ToolServers)(make).pipe(Layer.provide(ResourceStore.layer))
}

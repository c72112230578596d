/** Tool servers (spec 4.6): MCP servers agents can use. */
import { Schema } from "effect"
import { ToolServerId } from "./Ids.ts"
import { Metadata, MetadataPatch } from "./Metadata.ts"
import { ConnectionName, policyCreateFields, policyPatchFields, ToolPolicy, ToolRef } from "./ToolPolicy.ts"

const opt = Schema.optionalKey
const StringList = Schema.Array(Schema.String)

export const McpProtocolVersion = "2025-11-25" as const
export const Transport = Schema.Literals(["http", "sse"])
const Url = Schema.String.check(Schema.isBetweenLength(1, 2048, { message: "url must be 1 to 2048 characters" }))

export const ToolServerCreate = Schema.Struct({
  name: ConnectionName,
  transport: Transport,
  url: Url,
  allowedTools: opt(StringList),
  blockedTools: opt(StringList),
  protocolVersion: opt(Schema.Literal(McpProtocolVersion)),
  ...policyCreateFields,
  metadata: opt(Metadata)
}).annotate({ identifier: "ToolServerCreate" })
export type ToolServerCreate = typeof ToolServerCreate.Type

export const ToolServerPatch = Schema.Struct({
  name: opt(ConnectionName),
  transport: opt(Transport),
  url: opt(Url),
  allowedTools: opt(Schema.NullOr(StringList)),
  blockedTools: opt(Schema.NullOr(StringList)),
  ...policyPatchFields,
  metadata: opt(MetadataPatch)
}).annotate({ identifier: "ToolServerPatch" })
export type ToolServerPatch = typeof ToolServerPatch.Type

export const ToolServerConfig = Schema.Struct({
  transport: Transport,
  url: Schema.String,
  allowedTools: Schema.NullOr(StringList),
  blockedTools: Schema.NullOr(StringList),
  protocolVersion: Schema.Literal(McpProtocolVersion),
  ...ToolPolicy.fields
})
export type ToolServerConfig = typeof ToolServerConfig.Type

export const ToolServer = Schema.Struct({
  id: ToolServerId,
  object: Schema.Literal("tool_server"),
  name: Schema.String,
  ...ToolServerConfig.fields,
  metadata: Metadata,
  configVersion: Schema.Number,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "ToolServer" })
export type ToolServer = typeof ToolServer.Type

export const ToolServerTestResult = Schema.Struct({
  connected: Schema.Literal(true),
  latencyMs: Schema.Number,
  toolCount: Schema.Number,
  tools: Schema.Array(ToolRef)
}).annotate({ identifier: "ToolServerTestResult" })

/** HTTP connections (spec 4.7): OpenAPI / Swagger documents turned into tools. */
import { Schema } from "effect"
import { HttpConnectionId } from "./Ids.ts"
import { Metadata, MetadataPatch } from "./Metadata.ts"
import { ConnectionName, policyCreateFields, policyPatchFields, ToolPolicy, ToolRef } from "./ToolPolicy.ts"

const opt = Schema.optionalKey
const StringList = Schema.Array(Schema.String)

/** A URL to a JSON document, or the document itself (JSON text), at most 5 MiB. */
export const SpecSource = Schema.String.check(
  Schema.isBetweenLength(1, 5 * 1024 * 1024, { message: "spec must be a URL or a JSON document of at most 5 MiB" })
)
const Url = Schema.String.check(Schema.isBetweenLength(1, 2048, { message: "baseUrl must be 1 to 2048 characters" }))

export const HttpConnectionCreate = Schema.Struct({
  name: ConnectionName,
  spec: SpecSource,
  baseUrl: opt(Url),
  allowedOperations: opt(StringList),
  ...policyCreateFields,
  metadata: opt(Metadata)
}).annotate({ identifier: "HttpConnectionCreate" })
export type HttpConnectionCreate = typeof HttpConnectionCreate.Type

export const HttpConnectionPatch = Schema.Struct({
  name: opt(ConnectionName),
  spec: opt(SpecSource),
  baseUrl: opt(Schema.NullOr(Url)),
  allowedOperations: opt(StringList),
  ...policyPatchFields,
  metadata: opt(MetadataPatch)
}).annotate({ identifier: "HttpConnectionPatch" })
export type HttpConnectionPatch = typeof HttpConnectionPatch.Type

export const HttpConnectionConfig = Schema.Struct({
  spec: Schema.String,
  baseUrl: Schema.NullOr(Schema.String),
  allowedOperations: Schema.NullOr(StringList),
  ...ToolPolicy.fields
})
export type HttpConnectionConfig = typeof HttpConnectionConfig.Type

export const HttpConnection = Schema.Struct({
  id: HttpConnectionId,
  object: Schema.Literal("http_connection"),
  name: Schema.String,
  ...HttpConnectionConfig.fields,
  metadata: Metadata,
  configVersion: Schema.Number,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "HttpConnection" })
export type HttpConnection = typeof HttpConnection.Type

export const HttpConnectionTestResult = Schema.Struct({
  connected: Schema.Literal(true),
  latencyMs: Schema.Number,
  operationCount: Schema.Number,
  tools: Schema.Array(ToolRef)
}).annotate({ identifier: "HttpConnectionTestResult" })

/** Result handlers (spec 4.5): receive artifacts by signed POST. */
import { Schema } from "effect"
import { ResultHandlerId } from "./Ids.ts"
import { Metadata, MetadataPatch } from "./Metadata.ts"
import { SigningSecret } from "./ToolApprovalHook.ts"

const opt = Schema.optionalKey

export const ResultHandlerTimeout = { defaultMs: 30_000, maxMs: 300_000 } as const

const Name = Schema.String.check(Schema.isBetweenLength(1, 128, { message: "name must be 1 to 128 characters" }))
const Url = Schema.String.check(Schema.isBetweenLength(1, 2048, { message: "url must be 1 to 2048 characters" }))
const Timeout = Schema.Number.check(
  Schema.isInt({ message: "requestTimeoutMs must be an integer" }),
  Schema.isBetween({ minimum: 1, maximum: ResultHandlerTimeout.maxMs }, {
    message: `requestTimeoutMs must be between 1 and ${ResultHandlerTimeout.maxMs}`
  })
)

/** `kind` and `secret` are checked by the service, which answers with their own error codes. */
export const ResultHandlerCreate = Schema.Struct({
  kind: opt(Schema.Unknown),
  name: Name,
  url: Url,
  secret: opt(Schema.Unknown),
  requestTimeoutMs: opt(Schema.NullOr(Timeout)),
  metadata: opt(Metadata)
}).annotate({ identifier: "ResultHandlerCreate" })
export type ResultHandlerCreate = typeof ResultHandlerCreate.Type

export const ResultHandlerPatch = Schema.Struct({
  name: opt(Name),
  url: opt(Url),
  requestTimeoutMs: opt(Schema.NullOr(Timeout)),
  metadata: opt(MetadataPatch)
}).annotate({ identifier: "ResultHandlerPatch" })
export type ResultHandlerPatch = typeof ResultHandlerPatch.Type

export const ResultHandlerConfig = Schema.Struct({
  kind: Schema.Literal("artifact"),
  url: Schema.String,
  requestTimeoutMs: Schema.Number
})
export type ResultHandlerConfig = typeof ResultHandlerConfig.Type

export const ResultHandler = Schema.Struct({
  id: ResultHandlerId,
  object: Schema.Literal("result_handler"),
  kind: Schema.Literal("artifact"),
  name: Schema.String,
  url: Schema.String,
  requestTimeoutMs: Schema.Number,
  metadata: Metadata,
  configVersion: Schema.Number,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "ResultHandler" })
export type ResultHandler = typeof ResultHandler.Type

/**
 * A handler's answer to a dispatch (spec 4.5), as the service keeps it after
 * validation and normalization (src/resultHandlers/HandlerResponse.ts): at
 * least one of artifactId or url; `ref` holds the paste-ready reference.
 */
export const HandlerRef = Schema.Struct({
  kind: opt(Schema.String),
  id: opt(Schema.String),
  url: opt(Schema.String),
  block: opt(Schema.String)
})
export type HandlerRef = typeof HandlerRef.Type

export const HandlerAnswer = Schema.Struct({
  artifactId: opt(Schema.String),
  url: opt(Schema.String),
  ref: opt(HandlerRef),
  metadata: opt(Schema.Record(Schema.String, Schema.Unknown))
})
export type HandlerAnswer = typeof HandlerAnswer.Type

export { SigningSecret }

/**
 * Environments (issue 31): where a remote workspace's tools run. An
 * environment is a name and a connection token; runners started with the
 * token on the user's machines dial out to the service and run the
 * workspace tools there (docs/guide/remote-workspaces.md).
 */
import { Schema } from "effect"
import { EnvironmentId } from "./Ids.ts"
import { Metadata, MetadataPatch } from "./Metadata.ts"

const opt = Schema.optionalKey

const Name = Schema.String.check(Schema.isBetweenLength(1, 128, { message: "name must be 1 to 128 characters" }))

export const EnvironmentCreate = Schema.Struct({ name: Name, metadata: opt(Metadata) }).annotate({
  identifier: "EnvironmentCreate"
})
export type EnvironmentCreate = typeof EnvironmentCreate.Type

export const EnvironmentPatch = Schema.Struct({ name: opt(Name), metadata: opt(MetadataPatch) }).annotate({
  identifier: "EnvironmentPatch"
})
export type EnvironmentPatch = typeof EnvironmentPatch.Type

/** What is stored beside the row: the SHA-256 of the connection token, never the token. */
export const EnvironmentConfig = Schema.Struct({ tokenHash: Schema.String })
export type EnvironmentConfig = typeof EnvironmentConfig.Type

/** A runner connected now: what it said of itself when it connected, and when it was last heard of. */
export const EnvironmentRunner = Schema.Struct({
  hostName: Schema.String,
  version: Schema.String,
  connectedAt: Schema.String,
  lastHeartbeatAt: Schema.String
}).annotate({ identifier: "EnvironmentRunner" })
export type EnvironmentRunner = typeof EnvironmentRunner.Type

export const EnvironmentStatus = Schema.Literals(["connected", "disconnected"])

export const Environment = Schema.Struct({
  id: EnvironmentId,
  object: Schema.Literal("environment"),
  name: Schema.String,
  status: EnvironmentStatus.annotate({ description: "`connected` while at least one runner is connected." }),
  runners: Schema.Array(EnvironmentRunner),
  metadata: Metadata,
  configVersion: Schema.Number,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "Environment" })
export type Environment = typeof Environment.Type

/** Create and rotate-token answer the connection token, once; it is never shown again. */
export const EnvironmentWithToken = Schema.Struct({
  ...Environment.fields,
  token: Schema.String.annotate({
    description: "The runners' connection token (`envtok_…`). Shown once: store it now."
  })
}).annotate({ identifier: "EnvironmentWithToken" })
export type EnvironmentWithToken = typeof EnvironmentWithToken.Type

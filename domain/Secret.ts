/** Secrets (spec 2.5, 4.9): write-only values, exposed only through bindings. */
import { Schema } from "effect"
import { SecretId } from "./Ids.ts"
import { Metadata, MetadataPatch } from "./Metadata.ts"

const opt = Schema.optionalKey

export const SecretLimits = { maxValueBytes: 65_536, maxNameLength: 128 } as const

export const SecretName = Schema.String.check(
  Schema.isBetweenLength(1, SecretLimits.maxNameLength, {
    message: `name must be 1 to ${SecretLimits.maxNameLength} characters`
  })
)

/** Checked by the service for a precise message (bytes, not characters). */
export const SecretValue = Schema.String.annotate({
  description: "Non-empty UTF-8, at most 64 KiB. Write-only: never returned."
})

export const SecretCreate = Schema.Struct({
  name: SecretName,
  value: SecretValue,
  source: opt(Schema.String),
  contentType: opt(Schema.NullOr(Schema.String.check(Schema.isMaxLength(255)))),
  metadata: opt(Metadata)
}).annotate({ identifier: "SecretCreate" })
export type SecretCreate = typeof SecretCreate.Type

export const SecretPatch = Schema.Struct({
  name: opt(SecretName),
  contentType: opt(Schema.NullOr(Schema.String.check(Schema.isMaxLength(255)))),
  metadata: opt(MetadataPatch)
}).annotate({ identifier: "SecretPatch" })
export type SecretPatch = typeof SecretPatch.Type

export const SecretRotate = Schema.Struct({ value: SecretValue }).annotate({ identifier: "SecretRotate" })

/** What is stored in `config` beside the sealed value. */
export const SecretConfig = Schema.Struct({
  source: Schema.Literal("svc"),
  contentType: Schema.NullOr(Schema.String)
})
export type SecretConfig = typeof SecretConfig.Type

export const Secret = Schema.Struct({
  id: SecretId,
  object: Schema.Literal("secret"),
  name: Schema.String,
  source: Schema.Literals(["svc", "external"]),
  contentType: Schema.NullOr(Schema.String),
  metadata: Metadata,
  configVersion: Schema.Number,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "Secret" })
export type Secret = typeof Secret.Type

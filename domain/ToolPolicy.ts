/**
 * Fields tool servers (4.6) and HTTP connections (4.7) share, with the same
 * semantics: approval mode and gated tools, result cap, trust, deferred
 * schemas, required skills, enablement and request timeout.
 */
import { Schema } from "effect"
import { ApprovalMode } from "./Agent.ts"
import { SecretId } from "./Ids.ts"

export const ToolLimits = {
  /** Connection names: 1-56 of [A-Za-z0-9_-], no `__` (spec 8). */
  namePattern: /^(?!.*__)[A-Za-z0-9_-]{1,56}$/,
  toolNamePattern: /^[A-Za-z0-9_-]{1,64}$/,
  maxDescriptionChars: 2048,
  resultCapBytes: { default: 100_000, min: 1_024, max: 10_000_000 },
  requestTimeoutMs: { default: 60_000, max: 600_000 }
} as const

export const ConnectionName = Schema.String.check(
  Schema.isPattern(ToolLimits.namePattern, {
    message: "name must be 1 to 56 letters, digits, '_' or '-', without the reserved separator '__'"
  })
)

const StringList = Schema.Array(Schema.String.check(Schema.isNonEmpty({ message: "must not be empty" })))

export const RequiredSkills = Schema.Union([Schema.String.check(Schema.isNonEmpty()), Schema.Array(Schema.String)])
export type RequiredSkills = typeof RequiredSkills.Type

export const ResultCapBytes = Schema.Number.check(
  Schema.isInt({ message: "resultCapBytes must be an integer" }),
  Schema.isBetween({ minimum: ToolLimits.resultCapBytes.min, maximum: ToolLimits.resultCapBytes.max }, {
    message: `resultCapBytes must be between ${ToolLimits.resultCapBytes.min} and ${ToolLimits.resultCapBytes.max}`
  })
)

export const ToolTimeout = Schema.Number.check(
  Schema.isInt({ message: "requestTimeoutMs must be an integer" }),
  Schema.isBetween({ minimum: 1, maximum: ToolLimits.requestTimeoutMs.max }, {
    message: `requestTimeoutMs must be between 1 and ${ToolLimits.requestTimeoutMs.max}`
  })
)

export const AuthInput = Schema.Union([
  Schema.Struct({ type: Schema.Literal("bearer"), secretId: SecretId }),
  Schema.Struct({ type: Schema.Literal("none") })
]).annotate({ identifier: "ConnectionAuth" })
export type AuthInput = typeof AuthInput.Type

/** Registration fields of the shared policy (all optional). */
export const policyCreateFields = {
  auth: Schema.optionalKey(AuthInput),
  approval: Schema.optionalKey(ApprovalMode),
  gatedTools: Schema.optionalKey(StringList),
  resultCapBytes: Schema.optionalKey(ResultCapBytes),
  trusted: Schema.optionalKey(Schema.Boolean),
  defer: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  requiredSkills: Schema.optionalKey(Schema.NullOr(RequiredSkills)),
  enabled: Schema.optionalKey(Schema.Boolean),
  requestTimeoutMs: Schema.optionalKey(Schema.NullOr(ToolTimeout))
}

/** Update fields: approval and gatedTools accept null to clear. */
export const policyPatchFields = {
  ...policyCreateFields,
  approval: Schema.optionalKey(Schema.NullOr(ApprovalMode)),
  gatedTools: Schema.optionalKey(Schema.NullOr(StringList))
}

/** The stored, resolved policy. */
export const ToolPolicy = Schema.Struct({
  auth: AuthInput,
  approval: Schema.NullOr(ApprovalMode),
  gatedTools: Schema.NullOr(Schema.Array(Schema.String)),
  resultCapBytes: Schema.Number,
  trusted: Schema.Boolean,
  defer: Schema.NullOr(Schema.Boolean),
  requiredSkills: Schema.NullOr(RequiredSkills),
  enabled: Schema.Boolean,
  requestTimeoutMs: Schema.Number
})
export type ToolPolicy = typeof ToolPolicy.Type

export const ToolRef = Schema.Struct({ name: Schema.String, namespacedName: Schema.String })
export type ToolRef = typeof ToolRef.Type

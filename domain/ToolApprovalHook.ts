/** Tool approval hooks (spec 4.10, 6.1). */
import { Schema } from "effect"
import { HookId } from "./Ids.ts"
import { Metadata, MetadataPatch } from "./Metadata.ts"

const opt = Schema.optionalKey

/** Default and ceiling of a hook's requestTimeoutMs (spec 8). */
export const HookTimeoutCeilingMs = 790_000

export const OnHookError = Schema.Literals(["deny", "pause", "fail-run"])
export type OnHookError = typeof OnHookError.Type

const Name = Schema.String.check(Schema.isBetweenLength(1, 128, { message: "name must be 1 to 128 characters" }))
const Url = Schema.String.check(Schema.isBetweenLength(1, 2048, { message: "url must be 1 to 2048 characters" }))

/** The shortest signing secret accepted (hooks and result handlers), in bytes of its UTF-8: shorter ones are guessable. */
export const SigningSecretMinBytes = 16
const SigningSecretMaxLength = 1024

const utf8Bytes = (s: string): number => new TextEncoder().encode(s).byteLength

/** Why `secret` cannot sign deliveries (too short or too long), or undefined; the message names the field. */
export const signingSecretRefusal = (secret: string): string | undefined =>
  utf8Bytes(secret) < SigningSecretMinBytes
    ? `secret must be at least ${SigningSecretMinBytes} bytes (UTF-8); got ${utf8Bytes(secret)}`
    : secret.length > SigningSecretMaxLength
    ? `secret must be at most ${SigningSecretMaxLength} characters`
    : undefined

export const SigningSecret = Schema.String.check(
  Schema.makeFilter((secret: string) => signingSecretRefusal(secret) ?? true)
).annotate({
  description:
    `Signs every delivery (HMAC-SHA256): at least ${SigningSecretMinBytes} bytes of UTF-8, at most ${SigningSecretMaxLength} characters. Write-only: never returned.`
})
export const HookTimeout = Schema.Number.check(
  Schema.isInt({ message: "requestTimeoutMs must be an integer" }),
  Schema.isBetween({ minimum: 1, maximum: HookTimeoutCeilingMs }, {
    message: `requestTimeoutMs must be between 1 and ${HookTimeoutCeilingMs}`
  })
)

export const HookCreate = Schema.Struct({
  name: Name,
  url: Url,
  secret: SigningSecret,
  enabled: opt(Schema.Boolean),
  onHookError: opt(OnHookError),
  requestTimeoutMs: opt(Schema.NullOr(HookTimeout)),
  metadata: opt(Metadata)
}).annotate({ identifier: "ToolApprovalHookCreate" })
export type HookCreate = typeof HookCreate.Type

export const HookPatch = Schema.Struct({
  name: opt(Name),
  url: opt(Url),
  enabled: opt(Schema.Boolean),
  onHookError: opt(OnHookError),
  requestTimeoutMs: opt(Schema.NullOr(HookTimeout)),
  metadata: opt(MetadataPatch)
}).annotate({ identifier: "ToolApprovalHookPatch" })
export type HookPatch = typeof HookPatch.Type

export const RotateSigningSecret = Schema.Struct({ secret: SigningSecret })

export const HookConfig = Schema.Struct({
  url: Schema.String,
  enabled: Schema.Boolean,
  onHookError: OnHookError,
  requestTimeoutMs: Schema.Number
})
export type HookConfig = typeof HookConfig.Type

export const ToolApprovalHook = Schema.Struct({
  id: HookId,
  object: Schema.Literal("tool_approval_hook"),
  name: Schema.String,
  url: Schema.String,
  enabled: Schema.Boolean,
  onHookError: OnHookError,
  requestTimeoutMs: Schema.Number,
  metadata: Metadata,
  configVersion: Schema.Number,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "ToolApprovalHook" })
export type ToolApprovalHook = typeof ToolApprovalHook.Type

/** What a hook answers (6.1): only decision and reason. */
export const HookDecision = Schema.Struct({
  decision: Schema.Literals(["allow", "deny", "pause"]),
  reason: opt(Schema.String)
})
export type HookDecision = typeof HookDecision.Type

export const HookTestResult = Schema.Struct({
  delivered: Schema.Literal(true),
  latencyMs: Schema.Number,
  decision: Schema.Literals(["allow", "deny", "pause"]),
  reason: opt(Schema.String)
}).annotate({ identifier: "ToolApprovalHookTestResult" })

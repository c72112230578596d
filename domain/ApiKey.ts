/**
 * API keys as the API shows them (managed by an organization's admin keys):
 * the role of a key, the names of organizations and workspaces a key is
 * scoped to, the listing shape (never the secret) and the answer of a create
 * (the secret, shown once).
 */
import { Schema } from "effect"
import { ApiKeyId } from "./Ids.ts"

/** `member`: the workspace's resources; `admin`: that too, and the organization's keys. */
export const ApiKeyRole = Schema.Literals(["member", "admin"])
export type ApiKeyRole = typeof ApiKeyRole.Type

/** A workspace name: letters, digits, `_` and `-`, 1 to 64 characters. */
export const workspaceNamePattern = /^[A-Za-z0-9_-]{1,64}$/

/** An organization id: `org_` then letters, digits, `_` and `-`, 64 characters at most in all. */
export const organizationIdPattern = /^org_[A-Za-z0-9_-]{1,60}$/

/** The characters of an API key (SVC_API_KEYS entries; minted keys are `sk_` and base62). */
export const isKeyShaped = (key: string): boolean => /^[A-Za-z0-9_\-.~+/=]{1,256}$/.test(key)

export const isOrganizationId = (s: string): boolean => organizationIdPattern.test(s)
export const isWorkspaceName = (s: string): boolean => workspaceNamePattern.test(s)

export const ApiKeyLimits = { maxNameLength: 128 } as const

export const ApiKeyName = Schema.String.check(
  Schema.isBetweenLength(1, ApiKeyLimits.maxNameLength, {
    message: `name must be 1 to ${ApiKeyLimits.maxNameLength} characters`
  })
)

export const WorkspaceName = Schema.String.check(
  Schema.isPattern(workspaceNamePattern, {
    message: "workspace must be 1 to 64 letters, digits, '_' or '-'"
  })
)

export const ApiKeyCreate = Schema.Struct({
  name: ApiKeyName,
  /** Default: the workspace of the admin key that creates it. */
  workspace: Schema.optionalKey(WorkspaceName),
  /** Default: `member`. */
  role: Schema.optionalKey(ApiKeyRole)
}).annotate({ identifier: "ApiKeyCreate" })
export type ApiKeyCreate = typeof ApiKeyCreate.Type

const apiKeyFields = {
  id: ApiKeyId,
  object: Schema.Literal("api_key"),
  name: Schema.String,
  /** The key's first characters (at most 7, never more than a quarter of it), to tell keys apart. */
  prefix: Schema.String,
  workspace: Schema.String,
  role: ApiKeyRole,
  createdAt: Schema.String,
  /** When a request last authenticated with it (to within the key cache's 5 s); null if never. */
  lastUsedAt: Schema.NullOr(Schema.String),
  revokedAt: Schema.NullOr(Schema.String)
}

export const ApiKey = Schema.Struct(apiKeyFields).annotate({ identifier: "ApiKey" })
export type ApiKey = typeof ApiKey.Type

/** The answer of a create: the key as listed, and its secret, shown only in this answer. */
export const ApiKeyCreated = Schema.Struct({ ...apiKeyFields, key: Schema.String }).annotate({
  identifier: "ApiKeyCreated"
})
export type ApiKeyCreated = typeof ApiKeyCreated.Type

/**
 * Code-hosting connections (spec 2.7, 3.3, 4.8): a GitHub App installation
 * bound to a workspace, the repositories and owners it grants to agents, and
 * the routes' request and answer shapes. Repository names are `owner/name`.
 */
import { Schema } from "effect"
import { CodehostConnectionId } from "./Ids.ts"
import { Metadata, MetadataPatch } from "./Metadata.ts"

const opt = Schema.optionalKey

export const ConnectionStatus = Schema.Literals(["pending", "action_required", "ready", "revoked", "error"]).annotate({
  identifier: "CodehostConnectionStatus"
})
export type ConnectionStatus = typeof ConnectionStatus.Type

/** `owner/name` as GitHub spells them (case kept; GitHub compares them case-insensitively). */
export const repositoryPattern = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/
export const RepositoryName = Schema.String.check(
  Schema.isPattern(repositoryPattern, { message: "must be a repository name 'owner/name'" })
)
const Login = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, {
    message: "must be an account login (letters, digits, '-')"
  })
)

export const CodehostAccess = Schema.Struct({
  repositories: Schema.Array(RepositoryName),
  owners: Schema.Array(Login),
  account: Schema.Boolean
}).annotate({ identifier: "CodehostAccess" })
export type CodehostAccess = typeof CodehostAccess.Type

const CheckName = Schema.String.check(
  Schema.isBetweenLength(1, 255, { message: "a check name must be 1 to 255 characters" })
)

/**
 * What codehost_merge_pull_request requires of the head commit's checks (check
 * runs and commit statuses, as GitHub's branch protection counts both).
 */
export const MergePolicy = Schema.Struct({
  /** Every check run and status reported on the head commit has finished green (success, neutral or skipped). */
  allChecksGreen: Schema.Boolean,
  /** Checks (a check run's name or a status's context) that must be reported on the head commit, and green. */
  requiredChecks: Schema.Array(CheckName).check(
    Schema.isMaxLength(50, { message: "at most 50 required checks" })
  )
}).annotate({ identifier: "CodehostMergePolicy" })
export type MergePolicy = typeof MergePolicy.Type

/** The policy of a connection that never set one: every reported check must be green, none named. */
export const defaultMergePolicy: MergePolicy = { allChecksGreen: true, requiredChecks: [] }

/** PATCH mergePolicy: replaces the policy; a key left out takes its default. */
export const MergePolicyInput = Schema.Struct({
  allChecksGreen: Schema.optionalKey(Schema.Boolean),
  requiredChecks: Schema.optionalKey(MergePolicy.fields.requiredChecks)
}).annotate({ identifier: "CodehostMergePolicyInput" })

export const CodehostAccount = Schema.Struct({
  login: Schema.String,
  type: Schema.Literals(["User", "Organization"])
})
export type CodehostAccount = typeof CodehostAccount.Type

/** The consenting person's OAuth grant, kept (sealed) for account tools and to re-prove access on repair. */
export const UserGrant = Schema.Struct({
  status: Schema.Literals(["ok", "revoked", "none"]),
  login: Schema.NullOr(Schema.String),
  /** When the user token expires and when its refresh token does (GitHub App user tokens expire; absent: they do not). */
  expiresAt: Schema.optionalKey(Schema.NullOr(Schema.String)),
  refreshExpiresAt: Schema.optionalKey(Schema.NullOr(Schema.String))
})
export type UserGrant = typeof UserGrant.Type

/** What the service stores of a connection (the `config` column); the user token is sealed beside it. */
export const ConnectionState = Schema.Struct({
  status: ConnectionStatus,
  statusReason: Schema.NullOr(Schema.String),
  account: Schema.NullOr(CodehostAccount),
  access: CodehostAccess,
  installationId: Schema.NullOr(Schema.Number),
  /** The repositories the installation selects, as last seen (callback, sync, webhook). */
  selected: Schema.Array(Schema.String),
  userGrant: UserGrant,
  returnUrl: Schema.NullOr(Schema.String),
  lastSyncedAt: Schema.NullOr(Schema.String),
  /** Absent until set: defaultMergePolicy applies. */
  mergePolicy: Schema.optionalKey(MergePolicy)
})
export type ConnectionState = typeof ConnectionState.Type

export const CodehostConnection = Schema.Struct({
  id: CodehostConnectionId,
  object: Schema.Literal("codehost_connection"),
  name: Schema.String,
  status: ConnectionStatus,
  statusReason: Schema.NullOr(Schema.String),
  account: Schema.NullOr(CodehostAccount),
  access: CodehostAccess,
  mergePolicy: MergePolicy,
  supportsRepositoryTools: Schema.Boolean,
  supportsAccountTools: Schema.Boolean,
  lastSyncedAt: Schema.NullOr(Schema.String),
  metadata: Metadata,
  configVersion: Schema.Number,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "CodehostConnection" })
export type CodehostConnection = typeof CodehostConnection.Type

const Name = Schema.String.check(Schema.isBetweenLength(1, 100, { message: "name must be 1 to 100 characters" }))
const Url = Schema.String.check(Schema.isBetweenLength(1, 2048, { message: "returnUrl must be 1 to 2048 characters" }))

export const AuthorizeInput = Schema.Struct({
  name: opt(Name),
  returnUrl: opt(Url),
  connectionId: opt(CodehostConnectionId)
}).annotate({ identifier: "CodehostAuthorizeInput" })
export type AuthorizeInput = typeof AuthorizeInput.Type

export const AuthorizationStatus = Schema.Literals(["pending", "action_required", "completed"])

export const Authorization = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("codehost_authorization"),
  status: AuthorizationStatus,
  /** The install URL: signed, single use, 30 minutes. */
  url: opt(Schema.String),
  expiresAt: opt(Schema.String)
}).annotate({ identifier: "CodehostAuthorization" })
export type Authorization = typeof Authorization.Type

export const AuthorizationState = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("codehost_authorization"),
  status: AuthorizationStatus,
  connection: opt(CodehostConnection)
}).annotate({ identifier: "CodehostAuthorizationState" })
export type AuthorizationState = typeof AuthorizationState.Type

export const ConnectionPatch = Schema.Struct({
  name: opt(Name),
  access: opt(CodehostAccess),
  mergePolicy: opt(MergePolicyInput),
  metadata: opt(MetadataPatch)
}).annotate({ identifier: "CodehostConnectionPatch" })
export type ConnectionPatch = typeof ConnectionPatch.Type

export const RepositoryItem = Schema.Struct({
  repository: Schema.String,
  /** Selected by the installation: may be granted with PATCH access. */
  grantable: Schema.Boolean,
  /** In access.repositories now. */
  granted: Schema.Boolean
}).annotate({ identifier: "CodehostRepository" })
export type RepositoryItem = typeof RepositoryItem.Type

export const ProbeResult = Schema.Struct({
  repository: Schema.String,
  ok: Schema.Boolean,
  error: opt(Schema.String)
})

export const TestResult = Schema.Struct({
  ok: Schema.Boolean,
  status: ConnectionStatus,
  statusReason: Schema.NullOr(Schema.String),
  repositories: Schema.Array(ProbeResult),
  accountGrant: Schema.Literals(["ok", "revoked", "disabled"])
}).annotate({ identifier: "CodehostTestResult" })
export type TestResult = typeof TestResult.Type

/** Callback query GitHub sends after installation and the user's authorization. */
export const CallbackQuery = {
  state: opt(Schema.String),
  code: opt(Schema.String),
  installation_id: opt(Schema.String),
  setup_action: opt(Schema.String)
}

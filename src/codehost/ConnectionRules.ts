/**
 * The rules of a code-hosting connection's state as pure functions (spec 2.7,
 * 3.3, 4.8): the resource view, the authorization status, binding an
 * installation (callback and repair), reconciling with the installation's
 * state (sync, webhooks; never auto-granting), revoking the person's grant,
 * and checking an access update.
 */
import {
  type CodehostConnection,
  type ConnectionState,
  defaultMergePolicy,
  type MergePolicy,
  type UserGrant
} from "../../domain/Codehost.ts"
import { InvalidRequest } from "../../domain/Errors.ts"
import type { CodehostConnectionId } from "../../domain/Ids.ts"
import type { ResourceRow } from "../store/ResourceStore.ts"
import { rowFields } from "../tools/AdapterCrud.ts"
import type { InstallationInfo } from "./GitHubApp.ts"

export const initialState = (returnUrl: string | null): ConnectionState => ({
  status: "pending",
  statusReason: "Waiting for the app to be installed and authorized on GitHub (open the authorization URL).",
  account: null,
  access: { repositories: [], owners: [], account: false },
  installationId: null,
  selected: [],
  userGrant: { status: "none", login: null },
  returnUrl,
  lastSyncedAt: null
})

export const repositoryTools = (s: ConnectionState): boolean => s.status === "ready" && s.installationId !== null

export const accountTools = (s: ConnectionState): boolean =>
  repositoryTools(s) && s.access.account && s.userGrant.status === "ok"

/** The policy the merge tool applies: the connection's, or the default. */
export const mergePolicyOf = (s: ConnectionState): MergePolicy => s.mergePolicy ?? defaultMergePolicy

export const view = (row: ResourceRow<CodehostConnectionId>, s: ConnectionState): CodehostConnection => ({
  ...rowFields(row),
  object: "codehost_connection",
  status: s.status,
  statusReason: s.statusReason,
  account: s.account,
  access: s.access,
  mergePolicy: mergePolicyOf(s),
  supportsRepositoryTools: repositoryTools(s),
  supportsAccountTools: accountTools(s),
  lastSyncedAt: s.lastSyncedAt
})

/** GET authorize/:id: completed once the connection is ready. */
export const authorizationStatus = (s: ConnectionState): "pending" | "action_required" | "completed" =>
  s.status === "ready" ? "completed" : s.status === "action_required" ? "action_required" : "pending"

const lower = (names: ReadonlyArray<string>) => new Set(names.map((n) => n.toLowerCase()))

/** `granted` kept only where `selected` still has it (GitHub compares names case-insensitively). */
export const intersect = (granted: ReadonlyArray<string>, selected: ReadonlyArray<string>): ReadonlyArray<string> => {
  const still = lower(selected)
  return granted.filter((r) => still.has(r.toLowerCase()))
}

/**
 * The callback proved the person can access the installation: bind it. A first binding
 * grants what the installation selects and adds its account to owners; a repair keeps the
 * grant (narrowed to what is still selected) and account access as they were.
 */
export const bind = (
  s: ConnectionState,
  binding: {
    readonly installationId: number
    readonly info: InstallationInfo
    readonly selected: ReadonlyArray<string>
    readonly login: string
    /** When the person's token and its refresh token expire (GitHub App user tokens do). */
    readonly expiry: Pick<UserGrant, "expiresAt" | "refreshExpiresAt">
    readonly now: string
  }
): ConnectionState => {
  const first = s.installationId === null && s.access.repositories.length === 0
  const owners = s.access.owners.some((o) => o.toLowerCase() === binding.info.account.login.toLowerCase())
    ? s.access.owners
    : [...s.access.owners, binding.info.account.login]
  return {
    ...s,
    status: binding.info.suspended ? "revoked" : "ready",
    statusReason: binding.info.suspended ? "The installation is suspended on GitHub; unsuspend it, then sync." : null,
    account: binding.info.account,
    installationId: binding.installationId,
    selected: [...binding.selected],
    access: {
      repositories: first ? [...binding.selected] : [...intersect(s.access.repositories, binding.selected)],
      owners,
      account: s.access.account
    },
    userGrant: { status: "ok", login: binding.login, ...binding.expiry },
    lastSyncedAt: binding.now
  }
}

const userGrantRevoked =
  "The installing person's authorization was revoked; authorize again with this connectionId to capture a new one."

/** The person's grant is gone (revoked on GitHub, or expired and not renewed): revoked, saying why and what to do. */
export const revokeUserGrant = (s: ConnectionState, reason: string = userGrantRevoked): ConnectionState => ({
  ...s,
  status: "revoked",
  statusReason: reason,
  userGrant: { ...s.userGrant, status: "revoked" }
})

/** The binding could not be made: `error` with why (repair gives a fresh authorization). */
export const failed = (s: ConnectionState, reason: string): ConnectionState => ({
  ...s,
  status: "error",
  statusReason: reason
})

/**
 * Sync and webhooks: the installation's current state. Gone or suspended: revoked. Otherwise
 * grants removed upstream are removed and a healthy installation heals to ready; newly selected
 * repositories only become grantable. `userGrantOk` false (account access on): revoked too.
 */
export const reconcile = (
  s: ConnectionState,
  observed: {
    readonly info: InstallationInfo | undefined
    readonly selected: ReadonlyArray<string> | undefined
    readonly userGrantOk: boolean | undefined
    /** Why the grant is not ok, when there is more to say than that it was revoked. */
    readonly userGrantReason?: string | undefined
    readonly now: string
  }
): ConnectionState => {
  const base = { ...s, lastSyncedAt: observed.now }
  if (s.installationId === null) return base
  if (observed.info === undefined) {
    return {
      ...base,
      status: "revoked",
      statusReason: "The app was uninstalled from GitHub; authorize again with this connectionId to repair.",
      selected: []
    }
  }
  const selected = observed.selected ?? s.selected
  const next: ConnectionState = {
    ...base,
    account: observed.info.account,
    selected: [...selected],
    access: { ...s.access, repositories: [...intersect(s.access.repositories, selected)] }
  }
  if (observed.info.suspended) {
    return {
      ...next,
      status: "revoked",
      statusReason: "The installation is suspended on GitHub; unsuspend it, then sync."
    }
  }
  if (observed.userGrantOk === false) return revokeUserGrant(next, observed.userGrantReason)
  return {
    ...next,
    status: "ready",
    statusReason: null,
    userGrant: observed.userGrantOk === true ? { ...s.userGrant, status: "ok" } : s.userGrant
  }
}

/** Rule 3: an access update may grant only repositories the installation selects now. */
export const checkAccess = (
  repositories: ReadonlyArray<string>,
  selected: ReadonlyArray<string>
): InvalidRequest | undefined => {
  const available = lower(selected)
  const seen = new Set<string>()
  for (const [i, repository] of repositories.entries()) {
    const key = repository.toLowerCase()
    if (seen.has(key)) return InvalidRequest.forField(`access.repositories[${i}]`, `'${repository}' is listed twice.`)
    seen.add(key)
    if (!available.has(key)) {
      return InvalidRequest.forField(
        `access.repositories[${i}]`,
        `The installation does not select '${repository}' on GitHub; select it in the app's installation settings, then sync.`
      )
    }
  }
  return undefined
}

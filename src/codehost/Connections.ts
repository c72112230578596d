/**
 * Code-hosting connections (spec 2.7, 3.3, 4.8): the resource and its routes.
 * Authorization (a signed, single-use, 30-minute install URL) and the
 * callback that binds an installation live in ConnectionAuthorize.ts; the
 * rules of the state in ConnectionRules.ts. Every route answers 503
 * `codehost_unconfigured` when no GitHub App is configured.
 */
import { Context, Effect, Layer, Option } from "effect"
import {
  type ConnectionPatch,
  ConnectionState,
  defaultMergePolicy,
  type RepositoryItem,
  type TestResult
} from "../../domain/Codehost.ts"
import { InvalidRequest, Unavailable, UpstreamFailed } from "../../domain/Errors.ts"
import { CodehostConnectionId } from "../../domain/Ids.ts"
import type { PageOf, PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { canonicalJson } from "../CanonicalJson.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { SecretBox } from "../secrets/SecretBox.ts"
import { ResourceStore } from "../store/ResourceStore.ts"
import { nowIso } from "../Time.ts"
import { agentsReferencing, type Loaded, makeCrud, mergeMetadata } from "../tools/AdapterCrud.ts"
import { checkAccess, intersect, mergePolicyOf, reconcile, revokeUserGrant, view } from "./ConnectionRules.ts"
import { type AppClient, GitHubApp } from "./GitHubApp.ts"
import { call, GitHubFailed } from "./GitHubCall.ts"
import * as UserTokens from "./UserTokens.ts"

export type LoadedConnection = Loaded<ConnectionState, CodehostConnectionId>

export const unconfigured = new Unavailable({
  code: "codehost_unconfigured",
  message:
    "No GitHub App is configured on this deployment (SVC_GITHUB_APP_ID and the other SVC_GITHUB_* settings), so code-hosting connections are unavailable."
})

const upstream = (what: string) => (e: GitHubFailed) =>
  new UpstreamFailed({ code: "service_unavailable", message: `GitHub failed while ${what}: ${e.message}` })

/** The repositories page: sorted names, the cursor is the last name of the previous page. */
const pageOf = (
  items: ReadonlyArray<RepositoryItem>,
  page: { readonly limit?: number | undefined; readonly after?: string | undefined }
): PageOf<RepositoryItem> => {
  const limit = page.limit ?? 100
  const rest = page.after === undefined
    ? items
    : items.filter((i) => i.repository.toLowerCase() > page.after!.toLowerCase())
  const data = rest.slice(0, limit)
  const hasMore = rest.length > limit
  return {
    object: "list",
    data,
    hasMore,
    nextCursor: hasMore ? Buffer.from(data[data.length - 1].repository).toString("base64url") : null,
    limit
  }
}

const make = Effect.gen(function*() {
  const store = yield* ResourceStore
  const ids = yield* IdGenerator
  const box = yield* SecretBox
  const { client } = yield* GitHubApp
  const crud = makeCrud(store, ids, {
    table: "codehost_connections",
    idKind: "codehostConnection",
    id: CodehostConnectionId,
    resource: "codehost_connection",
    uniqueNames: false,
    config: ConnectionState,
    view
  })
  const app: Effect.Effect<AppClient, Unavailable> = Option.match(client, {
    onNone: () => Effect.fail(unconfigured),
    onSome: Effect.succeed
  })
  const configured = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.andThen(app, effect)

  const load = (principal: Principal, id: CodehostConnectionId) => configured(crud.load(principal, id))

  /** Saves a new state; access, installation, merge policy and name changes are structural (configVersion). */
  const save = (
    principal: Principal,
    current: LoadedConnection,
    next: ConnectionState,
    changes: { name?: string; metadata?: Record<string, string>; sealed?: LoadedConnection["row"]["sealed"] } = {}
  ) => {
    const name = changes.name ?? current.row.name
    const structural = name !== current.row.name ||
      canonicalJson([next.access, next.installationId, mergePolicyOf(next)]) !==
        canonicalJson([current.config.access, current.config.installationId, mergePolicyOf(current.config)])
    return crud.save(principal, current, {
      name,
      config: next,
      metadata: changes.metadata ?? current.row.metadata,
      sealed: changes.sealed === undefined ? current.row.sealed : changes.sealed
    }, structural)
  }

  /** The person's token, opened at the moment of use and renewed when it is about to expire (UserTokens.ts). */
  const userTokens = UserTokens.make({
    box,
    app,
    load: crud.load,
    store: (principal, current, next, sealed) => Effect.orDie(Effect.asVoid(save(principal, current, next, { sealed })))
  })

  /** Rule 5: the person's grant, renewed when needed and shown to work; undefined without account access. */
  const userGrantOf = (gh: AppClient, principal: Principal, loaded: LoadedConnection) =>
    Effect.gen(function*() {
      if (!loaded.config.access.account) return { userGrantOk: undefined }
      const current = yield* userTokens.current(principal, loaded)
      switch (current._tag) {
        case "None":
          return { userGrantOk: false }
        case "Refused":
          return { userGrantOk: false, userGrantReason: current.reason }
        case "Unavailable":
          return yield* new GitHubFailed({ status: 0, message: current.reason })
        case "Token":
          return {
            userGrantOk: yield* gh.userLogin(current.token).pipe(
              Effect.as(true),
              Effect.catchIf((e) => e.status === 401 || e.status === 403, () => Effect.succeed(false))
            )
          }
      }
    })

  /** What GitHub says now: the installation, its selection and (with account access) the person's grant. */
  const observe = (gh: AppClient, principal: Principal, loaded: LoadedConnection) =>
    Effect.gen(function*() {
      const installationId = loaded.config.installationId
      if (installationId === null) return { info: undefined, selected: undefined, userGrantOk: undefined }
      const info = Option.getOrUndefined(yield* gh.installation(installationId))
      const selected = info === undefined || info.suspended ? undefined : yield* gh.repositories(installationId)
      return { info, selected, ...(yield* userGrantOf(gh, principal, loaded)) }
    })

  const sync = Effect.fn("CodehostConnections.sync")(function*(principal: Principal, id: CodehostConnectionId) {
    const gh = yield* app
    const loaded = yield* crud.load(principal, id)
    // Loaded again: renewing the person's token stores a new grant.
    const observed = yield* observe(gh, principal, loaded).pipe(Effect.mapError(upstream("reading the installation")))
    const current = yield* crud.load(principal, id)
    return yield* save(principal, current, reconcile(current.config, { ...observed, now: yield* nowIso }))
  })

  /** Rule 5: no side effects; the status the connection would have after the probe. */
  const test = Effect.fn("CodehostConnections.test")(function*(principal: Principal, id: CodehostConnectionId) {
    const gh = yield* app
    const loaded = yield* crud.load(principal, id)
    const observed = yield* observe(gh, principal, loaded).pipe(Effect.mapError(upstream("reading the installation")))
    const after = reconcile(loaded.config, { ...observed, now: yield* nowIso })
    const installationId = loaded.config.installationId
    const granted = after.access.repositories
    const repositories = installationId === null || after.status !== "ready"
      ? granted.map((repository) => ({ repository, ok: false, error: "the installation is not usable" }))
      : yield* Effect.forEach(granted, (repository) => {
        const [owner, repo] = repository.split("/")
        return gh.token(installationId, { repositories: [repository], permissions: { metadata: "read" } }).pipe(
          Effect.flatMap((token) =>
            call((signal) => gh.octokit(token).rest.repos.get({ owner, repo, request: { signal } }))
          ),
          Effect.as({ repository, ok: true }),
          Effect.catch((e) => Effect.succeed({ repository, ok: false, error: e.message }))
        )
      })
    const result: TestResult = {
      ok: after.status === "ready" && repositories.every((r) => r.ok),
      status: after.status,
      statusReason: after.statusReason,
      repositories,
      accountGrant: !loaded.config.access.account ? "disabled" : observed.userGrantOk === true ? "ok" : "revoked"
    }
    return result
  })

  const repositories = Effect.fn("CodehostConnections.repositories")(function*(
    principal: Principal,
    id: CodehostConnectionId,
    page: { readonly limit?: number | undefined; readonly after?: string | undefined }
  ) {
    const gh = yield* app
    const { config } = yield* crud.load(principal, id)
    const selected = config.installationId === null || config.status !== "ready"
      ? config.selected
      : yield* gh.repositories(config.installationId).pipe(
        Effect.mapError(upstream("listing the installation's repositories"))
      )
    const grantedSet = new Set(config.access.repositories.map((r) => r.toLowerCase()))
    const selectedSet = new Set(selected.map((r) => r.toLowerCase()))
    const items: Array<RepositoryItem> = [
      ...selected.map((repository) => ({
        repository,
        grantable: true,
        granted: grantedSet.has(repository.toLowerCase())
      })),
      ...config.access.repositories.filter((r) => !selectedSet.has(r.toLowerCase())).map((repository) => ({
        repository,
        grantable: false,
        granted: true
      }))
    ].sort((a, b) => a.repository.toLowerCase().localeCompare(b.repository.toLowerCase()))
    return pageOf(items, page)
  })

  const update = Effect.fn("CodehostConnections.update")(
    function*(principal: Principal, id: CodehostConnectionId, patch: ConnectionPatch) {
      const gh = yield* app
      const loaded = yield* crud.load(principal, id)
      const metadata = yield* mergeMetadata(loaded.row.metadata, patch.metadata)
      let next = loaded.config
      if (patch.access !== undefined) {
        const installationId = loaded.config.installationId
        if (installationId === null) {
          return yield* InvalidRequest.forField(
            "access",
            "The connection has no installation yet: complete the authorization first."
          )
        }
        const selected = yield* gh.repositories(installationId).pipe(
          Effect.mapError(upstream("listing the installation's repositories"))
        )
        const problem = checkAccess(patch.access.repositories, selected)
        if (problem !== undefined) return yield* problem
        next = { ...next, selected: [...selected], access: patch.access }
      }
      if (patch.mergePolicy !== undefined) {
        next = { ...next, mergePolicy: { ...defaultMergePolicy, ...patch.mergePolicy } }
      }
      return yield* save(principal, loaded, next, {
        ...(patch.name === undefined ? {} : { name: patch.name }),
        metadata
      })
    }
  )

  return {
    app,
    crud,
    save,
    userTokens,
    /** The person's grant is gone (GitHub refused to renew it): the connection is revoked, saying why. */
    revokeUserGrant: (principal: Principal, id: CodehostConnectionId, reason: string) =>
      Effect.flatMap(
        crud.load(principal, id),
        (loaded) => save(principal, loaded, revokeUserGrant(loaded.config, reason))
      ).pipe(Effect.asVoid, Effect.orDie),
    list: (principal: Principal, page: PageRequest) => configured(crud.list(principal, page)),
    get: (principal: Principal, id: CodehostConnectionId) => configured(crud.get(principal, id)),
    load,
    update,
    /** Rule 6: 409 resource_in_use while agents reference it; GitHub's installation stays. */
    remove: (principal: Principal, id: CodehostConnectionId) =>
      configured(
        crud.remove(principal, id, () =>
          agentsReferencing(store, principal, [{ capabilities: { codehost: { connectionId: id } } }]))
      ),
    repositories,
    sync,
    test,
    /** The grant a run may use: the connection's repositories narrowed by the agent's list. */
    effectiveRepositories: (state: ConnectionState, narrowed: ReadonlyArray<string> | undefined) =>
      narrowed === undefined ? state.access.repositories : intersect(narrowed, state.access.repositories)
  }
})

export class CodehostConnections
  extends Context.Service<CodehostConnections, Effect.Success<typeof make>>()("svc/CodehostConnections")
{
  static readonly layer = Layer.effect(CodehostConnections)(make).pipe(
    Layer.provide([ResourceStore.layer, GitHubApp.layer])
  )
}

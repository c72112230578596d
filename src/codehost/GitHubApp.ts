/**
 * The service's GitHub App through Octokit (`@octokit/auth-app` for app JWTs
 * and installation tokens, `@octokit/rest` for calls): the install page, the
 * OAuth token endpoint (OAuthTokens.ts: codes, refresh tokens), the installations a
 * person can access, an installation's account and repositories, and
 * per-operation installation tokens narrowed to repositories and permissions
 * (spec 4.8 rule 7: minted for each operation, `refresh: true`, never cached).
 * Tokens stay `Redacted` until the Octokit that uses them is built; a failure
 * keeps only GitHub's status and message, credentials scrubbed (GitHubCall.ts).
 * Every call goes through the service's guarded client (src/outbound): https
 * and public addresses, unless SVC_ALLOW_PRIVATE_URLS=1 (a loopback fake, a
 * GitHub Enterprise Server on a private network).
 */
import { createAppAuth } from "@octokit/auth-app"
import { Octokit } from "@octokit/rest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { type GuardedFetch, Outbound } from "../outbound/Outbound.ts"
import type { GitHubAppConfig } from "./CodehostConfig.ts"
import { call, type GitHubFailed, silentLog } from "./GitHubCall.ts"
import { exchange, type Issued } from "./OAuthTokens.ts"

export type Permissions = Readonly<Record<string, "read" | "write">>

export interface InstallationInfo {
  readonly account: { readonly login: string; readonly type: "User" | "Organization" }
  readonly suspended: boolean
}

export interface AppClient {
  readonly config: GitHubAppConfig
  /** `<web>/apps/<slug>/installations/new?state=<state>` */
  readonly installUrl: (state: string) => string
  /** The person's user-to-server token (and refresh token) for an OAuth `code`. */
  readonly exchangeCode: (code: string) => Effect.Effect<Issued, GitHubFailed>
  /** A new user token (and refresh token) for a refresh token, which GitHub then forgets. */
  readonly refreshUserToken: (refresh: Redacted.Redacted) => Effect.Effect<Issued, GitHubFailed>
  /** The installation ids of this app the person can access. */
  readonly userInstallations: (userToken: Redacted.Redacted) => Effect.Effect<ReadonlyArray<number>, GitHubFailed>
  readonly userLogin: (userToken: Redacted.Redacted) => Effect.Effect<string, GitHubFailed>
  /** None when the installation is gone (404). */
  readonly installation: (installationId: number) => Effect.Effect<Option.Option<InstallationInfo>, GitHubFailed>
  /** `owner/name` of every repository the installation selects. */
  readonly repositories: (installationId: number) => Effect.Effect<ReadonlyArray<string>, GitHubFailed>
  /** A fresh installation token for exactly these repositories (`owner/name`) and permissions. */
  readonly token: (
    installationId: number,
    scope: { readonly repositories: ReadonlyArray<string>; readonly permissions: Permissions }
  ) => Effect.Effect<Redacted.Redacted, GitHubFailed>
  /** An Octokit for REST calls with a token (installation or user). */
  readonly octokit: (token: Redacted.Redacted) => Octokit
}

const make = (config: GitHubAppConfig, fetch: GuardedFetch): AppClient => {
  const base = new Octokit({ baseUrl: config.apiUrl, request: { fetch }, log: silentLog })
  const auth = createAppAuth({
    appId: config.appId,
    privateKey: Redacted.value(config.privateKey),
    clientId: config.clientId,
    clientSecret: Redacted.value(config.clientSecret),
    request: base.request,
    log: silentLog
  })
  const app = new Octokit({
    baseUrl: config.apiUrl,
    request: { fetch },
    log: silentLog,
    authStrategy: createAppAuth,
    auth: { appId: config.appId, privateKey: Redacted.value(config.privateKey), log: silentLog }
  })
  const oauth = exchange(base.request, config)
  const octokit = (token: Redacted.Redacted) =>
    new Octokit({ baseUrl: config.apiUrl, request: { fetch }, log: silentLog, auth: Redacted.value(token) })

  return {
    config,
    octokit,
    installUrl: (state) => `${config.webUrl}/apps/${config.slug}/installations/new?state=${encodeURIComponent(state)}`,
    exchangeCode: (code) => oauth({ code }, "the OAuth code was refused"),
    refreshUserToken: (refresh) =>
      oauth(
        { grant_type: "refresh_token", refresh_token: Redacted.value(refresh) },
        "GitHub refused to renew the person's authorization"
      ),
    userInstallations: (userToken) =>
      call((signal) => {
        const client = octokit(userToken)
        return client.paginate(client.rest.apps.listInstallationsForAuthenticatedUser, {
          per_page: 100,
          request: { signal }
        })
      }).pipe(
        Effect.map((installations) => installations.map((i) => i.id))
      ),
    userLogin: (userToken) =>
      Effect.map(
        call((signal) => octokit(userToken).rest.users.getAuthenticated({ request: { signal } })),
        (r) => r.data.login
      ),
    installation: (installationId) =>
      call((signal) => app.rest.apps.getInstallation({ installation_id: installationId, request: { signal } })).pipe(
        Effect.map(({ data }) => {
          const account = data.account !== null && "login" in data.account ? data.account : undefined
          return Option.some<InstallationInfo>({
            account: { login: account?.login ?? "", type: account?.type === "Organization" ? "Organization" : "User" },
            suspended: data.suspended_at !== null && data.suspended_at !== undefined
          })
        }),
        Effect.catchIf((e) => e.status === 404, () => Effect.succeed(Option.none<InstallationInfo>()))
      ),
    repositories: (installationId) =>
      Effect.flatMap(
        call((signal) =>
          auth({
            type: "installation",
            installationId,
            permissions: { metadata: "read" },
            refresh: true,
            request: { signal }
          })
        ),
        ({ token }) =>
          call((signal) => {
            const client = octokit(Redacted.make(token))
            return client.paginate(client.rest.apps.listReposAccessibleToInstallation, {
              per_page: 100,
              request: { signal }
            })
          })
      ).pipe(Effect.map((repositories) => repositories.map((r) => r.full_name))),
    token: (installationId, scope) =>
      call(() =>
        auth({
          type: "installation",
          installationId,
          // The access-token endpoint takes bare names: an installation belongs to one account.
          repositoryNames: scope.repositories.map((r) => r.slice(r.indexOf("/") + 1)),
          permissions: { ...scope.permissions },
          refresh: true
        })
      ).pipe(Effect.map(({ token }) => Redacted.make(token)))
  }
}

export class GitHubApp extends Context.Service<GitHubApp, {
  /** None when SVC_GITHUB_* is not set: code hosting is unconfigured. */
  readonly client: Option.Option<AppClient>
}>()("svc/GitHubApp") {
  static readonly layer = Layer.effect(GitHubApp)(
    Effect.gen(function*() {
      const config = yield* ServiceConfig
      const outbound = yield* Outbound
      return { client: Option.map(config.codehost, (app) => make(app, outbound.fetch)) }
    })
  )
}

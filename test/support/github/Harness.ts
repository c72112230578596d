/**
 * The service configured with the fake GitHub as its GitHub App
 * (SVC_GITHUB_* pointing at it), and the steps a person takes on GitHub:
 * authorize, install and consent, land on the callback.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { GitHubAppConfig } from "../../../src/codehost/CodehostConfig.ts"
import type { ServiceConfigShape } from "../../../src/config/ServiceConfig.ts"
import { DnsServer } from "../DnsServer.ts"
import * as TestServer from "../TestServer.ts"
import * as FakeGitHub from "./FakeGitHub.ts"

export class GitHub extends Context.Service<GitHub, FakeGitHub.FakeGitHub>()("test/FakeGitHub") {}

export const appConfig = (gh: FakeGitHub.FakeGitHub): GitHubAppConfig => ({
  appId: gh.appId,
  slug: gh.slug,
  privateKey: Redacted.make(gh.privateKey),
  clientId: gh.clientId,
  clientSecret: Redacted.make(gh.clientSecret),
  webhookSecret: Redacted.make(gh.webhookSecret),
  apiUrl: gh.apiUrl,
  webUrl: gh.webUrl
})

/**
 * The fake for a service process, named `github.test` (a DNS server of the test's answers for
 * it: a sandbox reaches 127.0.0.1 only as its own loopback), and the environment naming it
 * (SVC_GITHUB_*, SVC_DNS_SERVERS, SVC_ALLOW_PRIVATE_URLS).
 */
export const forProcess = Effect.gen(function*() {
  const dns = Context.get(yield* Layer.build(DnsServer.layer({ "github.test": "127.0.0.1" })), DnsServer)
  const gh = yield* FakeGitHub.start("github.test")
  const env: Record<string, string> = {
    SVC_GITHUB_APP_ID: gh.appId,
    SVC_GITHUB_APP_SLUG: gh.slug,
    SVC_GITHUB_PRIVATE_KEY: gh.privateKey,
    SVC_GITHUB_CLIENT_ID: gh.clientId,
    SVC_GITHUB_CLIENT_SECRET: gh.clientSecret,
    SVC_GITHUB_WEBHOOK_SECRET: gh.webhookSecret,
    SVC_GITHUB_API_URL: gh.apiUrl,
    SVC_GITHUB_WEB_URL: gh.webUrl,
    SVC_DNS_SERVERS: dns.address,
    SVC_ALLOW_PRIVATE_URLS: "1"
  }
  return { gh, env }
})

/**
 * The service (fresh database, with the test's own SQL client: `TestServer.layerWithSql`) with the
 * fake as its app, and the fake itself as `GitHub`. The fake
 * is named `github.test` (the test DNS server): a sandbox reaches 127.0.0.1 only as its own loopback.
 * With `tls`, the fake serves https with that key and certificate (the test makes the service trust it).
 */
export const layer = (
  overrides: Partial<ServiceConfigShape> = {},
  tls?: { readonly key: string; readonly cert: string }
) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const dns = yield* DnsServer
      const gh = yield* FakeGitHub.start("github.test", tls)
      return Layer.merge(
        TestServer.layerWithSql({ codehost: Option.some(appConfig(gh)), dnsServers: [dns.address], ...overrides }),
        Layer.succeed(GitHub)(gh)
      )
    })
  ).pipe(Layer.provide(DnsServer.layer({ "github.test": "127.0.0.1" })))

/** The `state` GitHub hands back, taken from an install URL. */
export const stateOf = (installUrl: string): string => new URL(installUrl).searchParams.get("state") ?? ""

/** GitHub's return to the callback after `login` installed (or approved) and consented. */
export const callback = (query: Record<string, string>) =>
  TestServer.request("GET", `/v1/codehost-connections/callback?${new URLSearchParams(query).toString()}`, {
    key: null,
    redirect: "manual"
  })

export interface Connected {
  readonly id: string
  readonly installationId: number
}

/**
 * The whole flow for a new connection: an installation of `account` selecting `repositories`,
 * a person who can access it, authorize, the callback; answers the connection's id.
 */
export const connect = (
  options: {
    readonly account: string
    readonly repositories: Array<string>
    readonly login?: string
    readonly key?: string
  }
) =>
  Effect.gen(function*() {
    const gh = yield* GitHub
    for (const full of options.repositories) {
      if (gh.state.repos.get(full.toLowerCase()) === undefined) gh.state.addRepo(full)
    }
    const installation = gh.state.addInstallation(options.account, options.repositories)
    const login = options.login ?? `person${gh.state.id()}`
    gh.state.addPerson(login, [installation.id])
    const started = yield* TestServer.request("POST", "/v1/codehost-connections/authorize", {
      body: {},
      ...(options.key === undefined ? {} : { key: options.key })
    })
    const { id, url } = started.json as { readonly id: string; readonly url: string }
    const landed = yield* callback({
      code: gh.state.codeFor(login),
      installation_id: String(installation.id),
      setup_action: "install",
      state: stateOf(url)
    })
    if (landed.status !== 200) return yield* Effect.die(new Error(`callback answered ${landed.status}: ${landed.text}`))
    return { id, installationId: installation.id } satisfies Connected
  })

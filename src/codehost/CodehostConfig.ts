/**
 * The GitHub App behind code-hosting connections (spec 4.8, README "Code-hosting
 * connections"), read with the rest of ServiceConfig at start
 * (`ServiceConfig.codehost`):
 *
 * - SVC_GITHUB_APP_ID, SVC_GITHUB_APP_SLUG: the app (its id signs app JWTs, its
 *   slug names the install page `<web>/apps/<slug>/installations/new`).
 * - SVC_GITHUB_PRIVATE_KEY (PEM) or SVC_GITHUB_PRIVATE_KEY_FILE (a path to it).
 * - SVC_GITHUB_CLIENT_ID, SVC_GITHUB_CLIENT_SECRET: the app's OAuth client (the
 *   installing person's consent, spec 5 rule 5).
 * - SVC_GITHUB_WEBHOOK_SECRET: verifies installation webhooks.
 * - SVC_GITHUB_API_URL (default https://api.github.com) and SVC_GITHUB_WEB_URL
 *   (default https://github.com): GitHub Enterprise Server, or a local fake.
 *
 * None set: code hosting is unconfigured (routes and `capabilities.codehost`
 * answer `codehost_unconfigured`). Some but not all: the process refuses to start.
 */
import { Config, Effect, Option, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { ConfigurationError } from "../config/ConfigurationError.ts"

export interface GitHubAppConfig {
  readonly appId: string
  readonly slug: string
  readonly privateKey: Redacted.Redacted
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted
  readonly webhookSecret: Redacted.Redacted
  /** REST API base, without a trailing slash. */
  readonly apiUrl: string
  /** Web base (install pages, OAuth, git remotes), without a trailing slash. */
  readonly webUrl: string
}

const required = [
  "SVC_GITHUB_APP_ID",
  "SVC_GITHUB_APP_SLUG",
  "SVC_GITHUB_CLIENT_ID",
  "SVC_GITHUB_CLIENT_SECRET",
  "SVC_GITHUB_WEBHOOK_SECRET"
] as const

const invalid = (message: string) => new ConfigurationError({ message })

const baseUrl = (name: string, fallback: string) =>
  Effect.flatMap(Config.String(name).pipe(Config.withDefault(fallback)), (raw) => {
    const url = URL.parse(raw)
    return url === null || !/^https?:$/.test(url.protocol) || url.username !== "" || url.password !== ""
      ? Effect.fail(invalid(`${name} must be an http(s) URL without credentials, got '${raw}'`))
      : Effect.succeed(raw.replace(/\/+$/, ""))
  })

/** The app from the environment: none when nothing is set; a partial or malformed setting stops the process. */
export const readCodehostConfig = Effect.gen(function*() {
  const setting = (name: string) =>
    Config.String(name).pipe(Config.option, Effect.map((o) => Option.filter(o, (v) => v.trim() !== "")))
  const values = new Map<string, string>()
  for (const name of required) {
    const value = yield* setting(name)
    if (Option.isSome(value)) values.set(name, value.value.trim())
  }
  const pem = yield* setting("SVC_GITHUB_PRIVATE_KEY")
  const pemFile = yield* setting("SVC_GITHUB_PRIVATE_KEY_FILE")
  if (values.size === 0 && Option.isNone(pem) && Option.isNone(pemFile)) return Option.none<GitHubAppConfig>()
  const missing: Array<string> = required.filter((name) => !values.has(name))
  if (Option.isNone(pem) && Option.isNone(pemFile)) missing.push("SVC_GITHUB_PRIVATE_KEY")
  if (missing.length > 0) {
    return yield* invalid(`A GitHub App needs every SVC_GITHUB_* setting; missing: ${missing.join(", ")}`)
  }
  if (Option.isSome(pem) && Option.isSome(pemFile)) {
    return yield* invalid("Set SVC_GITHUB_PRIVATE_KEY or SVC_GITHUB_PRIVATE_KEY_FILE, not both")
  }
  const key = Option.isSome(pem)
    ? pem.value.replaceAll("\\n", "\n")
    : yield* Effect.try({
      try: () => readFileSync(Option.getOrThrow(pemFile), "utf8"),
      catch: (e) => invalid(`SVC_GITHUB_PRIVATE_KEY_FILE cannot be read: ${e instanceof Error ? e.message : String(e)}`)
    })
  if (!key.includes("-----BEGIN") || !key.includes("PRIVATE KEY-----")) {
    return yield* invalid("SVC_GITHUB_PRIVATE_KEY must be the app's private key in PEM form")
  }
  const appId = values.get("SVC_GITHUB_APP_ID") ?? ""
  if (!/^[0-9]+$/.test(appId)) return yield* invalid(`SVC_GITHUB_APP_ID must be the app's numeric id, got '${appId}'`)
  const slug = values.get("SVC_GITHUB_APP_SLUG") ?? ""
  if (!/^[A-Za-z0-9][A-Za-z0-9-]*$/.test(slug)) {
    return yield* invalid(`SVC_GITHUB_APP_SLUG is not an app slug: '${slug}'`)
  }
  const config: GitHubAppConfig = {
    appId,
    slug,
    privateKey: Redacted.make(key),
    clientId: values.get("SVC_GITHUB_CLIENT_ID") ?? "",
    clientSecret: Redacted.make(values.get("SVC_GITHUB_CLIENT_SECRET") ?? ""),
    webhookSecret: Redacted.make(values.get("SVC_GITHUB_WEBHOOK_SECRET") ?? ""),
    apiUrl: yield* baseUrl("SVC_GITHUB_API_URL", "https://api.github.com"),
    webUrl: yield* baseUrl("SVC_GITHUB_WEB_URL", "https://github.com")
  }
  return Option.some(config)
})

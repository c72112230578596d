/**
 * Process configuration, read once from the environment at start. Every
 * variable is listed in the README's configuration table.
 */
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { type ApiKeyRole, isKeyShaped, isOrganizationId, isWorkspaceName } from "../../domain/ApiKey.ts"
import { type Band, BandNames } from "../../domain/Band.ts"
import { type LimitsConfig, parseCap, parseQuotas, parseRate } from "../access/LimitsConfig.ts"
import { type ArtifactConfig, readArtifactConfig } from "../artifacts/ArtifactConfig.ts"
import { type GitHubAppConfig, readCodehostConfig } from "../codehost/CodehostConfig.ts"
import * as HostRuntimes from "../documents/HostRuntimes.ts"
import { type MediaConfig, readMediaConfig } from "../media/MediaConfig.ts"
import { readWebSearchConfig, type WebSearchConfig } from "../web/WebConfig.ts"
import { defaultAnthropicBaseUrl, defaultOpenAiBaseUrl, routeProblem } from "./BandRoutes.ts"
import { ConfigurationError } from "./ConfigurationError.ts"
import { parseOrigin } from "./Origins.ts"
import { type PreviewConfig, readPreviewConfig } from "./PreviewConfig.ts"
import { readTelemetry, type TelemetryConfig } from "./TelemetryConfig.ts"

/** A band's model route: `scripted`, `openai:<model>` or `anthropic:<model>`; `none` disables the band. */
export interface BandRoute {
  readonly route: string | null
  readonly strict: boolean
}

export interface RunnerTlsFiles {
  readonly cert: string
  readonly key: string
  readonly ca: string
}

/** A key of SVC_API_KEYS. */
export interface SeedKey {
  readonly key: Redacted.Redacted
  readonly organizationId: string
  readonly workspaceId: string
  readonly role?: ApiKeyRole
}

export interface ServiceConfigShape {
  readonly port: number
  readonly host: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  /** `<key>:<organization>:<workspace>[:admin]` entries from SVC_API_KEYS (no role: `member`). */
  readonly seedKeys: ReadonlyArray<SeedKey>
  readonly bands: Readonly<Record<Band, BandRoute>>
  /** SVC_CLUSTER_ROLE: `runner` (hosts entities) or `client` (serves the API only; needs DATABASE_URL). */
  readonly clusterRole: "runner" | "client"
  readonly runnerHost: string
  readonly runnerPort: number
  /** SVC_RUNNER_LISTEN_HOST: the address the runner port binds (default SVC_RUNNER_HOST). */
  readonly runnerListenHost: string
  /**
   * SVC_RUNNER_TLS_CERT / _KEY / _CA (PEM file paths, all three or none): runner-to-runner traffic
   * over mutual TLS, each side presenting a certificate the CA signed.
   */
  readonly runnerTls: Option.Option<RunnerTlsFiles>
  /** SVC_SHUTDOWN_GRACE_MS: on SIGTERM / SIGINT, how long running requests may take to finish. */
  readonly shutdownGraceMs: number
  /**
   * SVC_PROCESSES: service processes on this host. Above 1 (PostgreSQL only) the started
   * process supervises that many workers sharing PORT, worker i a runner on SVC_RUNNER_PORT + i.
   */
  readonly processes: number
  readonly maxBodyBytes: number
  /** Skips the per-request access log (SVC_QUIET=1). */
  readonly quiet: boolean
  /** SVC_MASTER_KEY: the current key for secrets at rest; SVC_MASTER_KEY_PREVIOUS: older keys (decrypt only). */
  readonly masterKey: Option.Option<Redacted.Redacted>
  readonly previousMasterKeys: ReadonlyArray<Redacted.Redacted>
  /** SVC_ALLOW_PRIVATE_URLS=1: http and private addresses allowed for registered URLs (unsafe in production). */
  readonly allowPrivateUrls: boolean
  /** SVC_DNS_SERVERS: resolvers for outbound hostnames (`host[:port]`, comma-separated); system resolver if empty. */
  readonly dnsServers: ReadonlyArray<string>
  /** SVC_TRUSTED_ORIGINS: origins (`scheme://host[:port]`) the guarded client may reach though the URL policy would refuse them. */
  readonly trustedOrigins: ReadonlyArray<string>
  /** SVC_PUBLIC_URL: the base URL clients reach this service at (hook `resolveUrl`s); default http://HOST:PORT. */
  readonly publicUrl: string
  /** The previews' own listener and origin (SVC_PREVIEW_PORT, SVC_PREVIEW_ORIGIN): src/config/PreviewConfig.ts. */
  readonly previews: PreviewConfig
  /** SVC_ROUTE_PRICES: `<route>=<input>/<output>[/<cached input>]` cents per 1,000 tokens, `;`-separated; over the price catalog. */
  readonly routePrices: string
  /** OPENAI_BASE_URL / OPENAI_API_KEY for `openai:<model>` routes (any OpenAI-compatible server). */
  readonly openai: { readonly baseUrl: string; readonly apiKey: Option.Option<Redacted.Redacted> }
  /** SVC_RUN_STALL_MS: an executing run heartbeats; one silent this long is re-dispatched by the recovery pass. */
  readonly runStallMs: number
  /** SVC_RECOVERY_INTERVAL_MS: how often the recovery pass looks for stalled runs. */
  readonly recoveryIntervalMs: number
  /** SVC_MAX_PARK_MS: the max-park window (default 14 days; a longer maxDurationMs extends it). */
  readonly maxParkMs: number
  /** SVC_MCP_IDLE_MS: a warm MCP session no run has used for this long is closed; also the age after which its tool list is read again. */
  readonly mcpIdleMs: number
  /** SVC_WORKSPACE_ROOT: where managed workspaces live (`<root>/workspaces/<thread id>`); every directory above it must be traversable by others. */
  readonly workspaceRoot: string
  /** Largest stored snapshot of a workspace (gzip'd tar), in bytes (SVC_WORKSPACE_SNAPSHOT_MAX_BYTES). */
  readonly workspaceSnapshotMaxBytes: number
  /** SVC_MAX_STEP_MS: a run's step (one model call and its tool calls) running longer ends the run with step_duration_exceeded. */
  readonly maxStepMs: number
  /** SVC_MAX_RUN_CENTS: the platform's cost ceiling per run; a run reaching it ends with per_run_cap_exceeded (null: no ceiling). */
  readonly maxRunCents: number | null
  /**
   * SVC_MAX_DELEGATION_DEPTH: how many levels of workers a run tree may have below its root (subagents): 1, the
   * root's workers do not delegate; 2 (default), they may, their own workers do not.
   */
  readonly maxDelegationDepth: number
  /** SVC_EVENT_RETENTION_DAYS: the stream of a run that ended longer ago is deleted; replaying it ends with stream_replay_unavailable. */
  readonly eventRetentionDays: number
  /** ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY for `anthropic:<model>` routes. */
  readonly anthropic: { readonly baseUrl: string; readonly apiKey: Option.Option<Redacted.Redacted> }
  /** SVC_RATE_KEY, SVC_RATE_ORG, SVC_MAX_ACTIVE_RUNS_PER_WORKSPACE, SVC_ORG_SPEND_QUOTA (all off when unset). */
  readonly limits: LimitsConfig
  /** SVC_ARTIFACT_STORE, SVC_S3_*, SVC_FILE_MAX_BYTES, SVC_ARTIFACT_RETENTION_DAYS, SVC_ARTIFACT_URL_TTL_SECONDS. */
  readonly artifacts: ArtifactConfig
  /** OTLP export (OTEL_*), SVC_METRICS / SVC_METRICS_TOKEN, SVC_LOG_FORMAT: src/config/TelemetryConfig.ts. */
  readonly telemetry: TelemetryConfig
  /** The GitHub App of code-hosting connections (SVC_GITHUB_*); none: code hosting is unconfigured. */
  readonly codehost: Option.Option<GitHubAppConfig>
  /** SVC_WEB_SEARCH (+ TAVILY_API_KEY / BRAVE_SEARCH_API_KEY, SVC_WEB_SEARCH_STRICT): web_search's provider; none: web_fetch only. */
  readonly webSearch: Option.Option<WebSearchConfig>
  /** What the host gives workspace.documents and workspace.mediaEditing, looked at once at start (src/documents/HostRuntimes.ts). */
  readonly hostRuntimes: HostRuntimes.HostRuntimes
  /** SVC_MEDIA_* (+ ELEVENLABS_*, SVC_MEDIA_PRICES, SVC_MEDIA_STRICT): the media routes of capabilities.media (src/media/MediaConfig.ts). */
  readonly media: MediaConfig
}

export class ServiceConfig extends Context.Service<ServiceConfig, ServiceConfigShape>()("svc/ServiceConfig") {
  static readonly layer = Layer.effect(ServiceConfig)(
    Effect.gen(function*() {
      const port = yield* Config.Port("PORT").pipe(Config.withDefault(8080))
      const host = yield* Config.String("HOST").pipe(Config.withDefault("127.0.0.1"))
      const databaseUrl = yield* Config.Redacted("DATABASE_URL").pipe(Config.option)
      const dataDir = yield* Config.String("SVC_DATA_DIR").pipe(Config.withDefault("./.svc-data"))
      const rawKeys = yield* Config.String("SVC_API_KEYS").pipe(Config.withDefault(""))
      const seedKeys = yield* parseSeedKeys(rawKeys)
      const strictBands = yield* Config.String("SVC_STRICT_BANDS").pipe(Config.option)
      for (const name of Option.match(strictBands, { onNone: () => [], onSome: list })) {
        if (!BandNames.some((b) => b === name)) {
          return yield* new ConfigurationError({
            message: `SVC_STRICT_BANDS: '${name}' is not a band (${BandNames.join(", ")})`
          })
        }
      }
      const bands = {} as Record<Band, BandRoute>
      for (const band of BandNames) {
        const raw = yield* Config.String(`SVC_BAND_${band.toUpperCase()}`).pipe(Config.withDefault("scripted"))
        const route = raw === "" || raw === "none" ? null : raw
        const problem = route === null ? undefined : routeProblem(band, route)
        if (problem !== undefined) return yield* new ConfigurationError({ message: problem })
        const strict = Option.match(strictBands, {
          // Without an explicit list, only the built-in scripted model is strict-capable:
          // it runs in-process, so nothing is retained or sent anywhere.
          onNone: () => route === "scripted",
          onSome: (list) => route !== null && list.split(",").map((s) => s.trim()).includes(band)
        })
        bands[band] = { route, strict }
      }
      const clusterRole = yield* Config.Literals(["runner", "client"], "SVC_CLUSTER_ROLE").pipe(
        Config.withDefault("runner" as const)
      )
      const runnerHost = yield* Config.String("SVC_RUNNER_HOST").pipe(Config.withDefault("localhost"))
      const runnerPort = yield* Config.Port("SVC_RUNNER_PORT").pipe(Config.withDefault(34431))
      const runnerListenHost = yield* Config.String("SVC_RUNNER_LISTEN_HOST").pipe(Config.withDefault(runnerHost))
      const runnerTls = yield* readRunnerTls
      const shutdownGraceMs = yield* Config.Int("SVC_SHUTDOWN_GRACE_MS").pipe(Config.withDefault(10_000))
      if (shutdownGraceMs < 0) {
        return yield* new ConfigurationError({
          message: `SVC_SHUTDOWN_GRACE_MS must be at least 0, got ${shutdownGraceMs}`
        })
      }
      const processes = yield* Config.Int("SVC_PROCESSES").pipe(Config.withDefault(1))
      if (processes < 1) {
        return yield* new ConfigurationError({ message: `SVC_PROCESSES must be at least 1, got ${processes}` })
      }
      if (processes > 1 && Option.isNone(databaseUrl)) {
        return yield* new ConfigurationError({
          message: "SVC_PROCESSES > 1 needs DATABASE_URL: the embedded database is one process"
        })
      }
      const maxBodyBytes = yield* Config.Int("SVC_MAX_BODY_BYTES").pipe(Config.withDefault(1_048_576))
      const quiet = yield* Config.Boolean("SVC_QUIET").pipe(Config.withDefault(false))
      const masterKey = yield* Config.Redacted("SVC_MASTER_KEY").pipe(Config.option)
      const previousMasterKeys = list(yield* Config.String("SVC_MASTER_KEY_PREVIOUS").pipe(Config.withDefault(""))).map(
        (k) => Redacted.make(k)
      )
      const allowPrivateUrls = yield* Config.Boolean("SVC_ALLOW_PRIVATE_URLS").pipe(Config.withDefault(false))
      const dnsServers = list(yield* Config.String("SVC_DNS_SERVERS").pipe(Config.withDefault("")))
      const trustedOrigins = yield* readTrustedOrigins
      const publicUrl = (yield* Config.String("SVC_PUBLIC_URL").pipe(Config.withDefault(`http://${host}:${port}`)))
        .replace(
          /\/+$/,
          ""
        )
      const previews = yield* readPreviewConfig(port, publicUrl)
      const routePrices = yield* Config.String("SVC_ROUTE_PRICES").pipe(Config.withDefault(""))
      for (const entry of routePrices.split(";").map((s) => s.trim()).filter((s) => s.length > 0)) {
        if (!pricePattern.test(entry)) {
          return yield* new ConfigurationError({
            message:
              `SVC_ROUTE_PRICES: expected <route>=<input cents>/<output cents>[/<cached input cents>] per 1,000 tokens, got '${entry}'`
          })
        }
      }
      const openai = {
        baseUrl: yield* Config.String("OPENAI_BASE_URL").pipe(Config.withDefault(defaultOpenAiBaseUrl)),
        apiKey: yield* Config.Redacted("OPENAI_API_KEY").pipe(Config.option)
      }
      const anthropic = {
        baseUrl: yield* Config.String("ANTHROPIC_BASE_URL").pipe(Config.withDefault(defaultAnthropicBaseUrl)),
        apiKey: yield* Config.Redacted("ANTHROPIC_API_KEY").pipe(Config.option)
      }
      const runStallMs = yield* Config.Int("SVC_RUN_STALL_MS").pipe(Config.withDefault(120_000))
      const recoveryIntervalMs = yield* Config.Int("SVC_RECOVERY_INTERVAL_MS").pipe(Config.withDefault(1_000))
      const maxParkMs = yield* Config.Int("SVC_MAX_PARK_MS").pipe(Config.withDefault(14 * 24 * 60 * 60 * 1000))
      const mcpIdleMs = yield* Config.Int("SVC_MCP_IDLE_MS").pipe(Config.withDefault(60_000))
      const workspaceRoot = yield* Config.String("SVC_WORKSPACE_ROOT").pipe(Config.withDefault("./.svc-workspaces"))
      const workspaceSnapshotMaxBytes = yield* Config.Int("SVC_WORKSPACE_SNAPSHOT_MAX_BYTES").pipe(
        Config.withDefault(256 * 1024 * 1024)
      )
      if (workspaceSnapshotMaxBytes < 1) {
        return yield* new ConfigurationError({
          message: `SVC_WORKSPACE_SNAPSHOT_MAX_BYTES must be at least 1, got ${workspaceSnapshotMaxBytes}`
        })
      }
      const maxStepMs = yield* Config.Int("SVC_MAX_STEP_MS").pipe(Config.withDefault(600_000))
      if (maxStepMs < 1) {
        return yield* new ConfigurationError({ message: `SVC_MAX_STEP_MS must be at least 1, got ${maxStepMs}` })
      }
      const maxRunCents = Option.getOrNull(yield* Config.Number("SVC_MAX_RUN_CENTS").pipe(Config.option))
      if (maxRunCents !== null && !(maxRunCents >= 0)) {
        return yield* new ConfigurationError({
          message: `SVC_MAX_RUN_CENTS must be a number of cents >= 0, got ${maxRunCents}`
        })
      }
      const maxDelegationDepth = yield* Config.Int("SVC_MAX_DELEGATION_DEPTH").pipe(Config.withDefault(2))
      if (maxDelegationDepth < 1) {
        return yield* new ConfigurationError({
          message: `SVC_MAX_DELEGATION_DEPTH must be at least 1, got ${maxDelegationDepth}`
        })
      }
      const eventRetentionDays = yield* Config.Int("SVC_EVENT_RETENTION_DAYS").pipe(Config.withDefault(30))
      if (eventRetentionDays < 1) {
        return yield* new ConfigurationError({
          message: `SVC_EVENT_RETENTION_DAYS must be at least 1, got ${eventRetentionDays}`
        })
      }
      const setting = (name: string) => Config.String(name).pipe(Config.withDefault(""))
      const limits: LimitsConfig = {
        keyRate: yield* parseRate("SVC_RATE_KEY", yield* setting("SVC_RATE_KEY")),
        orgRate: yield* parseRate("SVC_RATE_ORG", yield* setting("SVC_RATE_ORG")),
        maxActiveRunsPerWorkspace: yield* parseCap(
          "SVC_MAX_ACTIVE_RUNS_PER_WORKSPACE",
          yield* setting("SVC_MAX_ACTIVE_RUNS_PER_WORKSPACE")
        ),
        spendQuotas: yield* parseQuotas("SVC_ORG_SPEND_QUOTA", yield* setting("SVC_ORG_SPEND_QUOTA"))
      }
      const artifacts = yield* readArtifactConfig
      const telemetry = yield* readTelemetry
      const codehost = yield* readCodehostConfig
      const webSearch = yield* readWebSearchConfig
      const hostRuntimes = HostRuntimes.probe()
      const media = yield* readMediaConfig(openai)
      return {
        codehost,
        webSearch,
        hostRuntimes,
        media,
        limits,
        artifacts,
        telemetry,
        runStallMs,
        recoveryIntervalMs,
        maxParkMs,
        mcpIdleMs,
        workspaceRoot,
        workspaceSnapshotMaxBytes,
        maxStepMs,
        maxRunCents,
        maxDelegationDepth,
        eventRetentionDays,
        routePrices,
        openai,
        anthropic,
        port,
        host,
        databaseUrl,
        dataDir,
        seedKeys,
        bands,
        clusterRole,
        runnerHost,
        runnerPort,
        runnerListenHost,
        runnerTls,
        shutdownGraceMs,
        processes,
        maxBodyBytes,
        quiet,
        masterKey,
        previousMasterKeys,
        allowPrivateUrls,
        dnsServers,
        trustedOrigins,
        publicUrl,
        previews
      }
    })
  )
}

/** The three runner TLS files, all or none: half a configuration is a mistake, not plain TCP. */
const readRunnerTls = Effect.gen(function*() {
  const cert = yield* Config.String("SVC_RUNNER_TLS_CERT").pipe(Config.option)
  const key = yield* Config.String("SVC_RUNNER_TLS_KEY").pipe(Config.option)
  const ca = yield* Config.String("SVC_RUNNER_TLS_CA").pipe(Config.option)
  if (Option.isSome(cert) && Option.isSome(key) && Option.isSome(ca)) {
    return Option.some<RunnerTlsFiles>({ cert: cert.value, key: key.value, ca: ca.value })
  }
  if (Option.isNone(cert) && Option.isNone(key) && Option.isNone(ca)) return Option.none<RunnerTlsFiles>()
  return yield* new ConfigurationError({
    message: "SVC_RUNNER_TLS_CERT, SVC_RUNNER_TLS_KEY and SVC_RUNNER_TLS_CA go together: set all three or none"
  })
})

/** Each entry an http(s) origin exactly: no path, query, fragment or credentials. */
const readTrustedOrigins = Effect.gen(function*() {
  const entries = list(yield* Config.String("SVC_TRUSTED_ORIGINS").pipe(Config.withDefault("")))
  const origins: Array<string> = []
  for (const entry of entries) {
    const origin = parseOrigin(entry)
    if (origin === undefined) {
      return yield* new ConfigurationError({
        message: `SVC_TRUSTED_ORIGINS: expected http(s)://host[:port] origins, got '${entry}'`
      })
    }
    origins.push(origin)
  }
  return origins
})

const list = (raw: string): Array<string> => raw.split(",").map((s) => s.trim()).filter((s) => s.length > 0)

/** `<route>=<input>/<output>[/<cached input>]`: non-negative decimal cents per 1,000 tokens. */
const pricePattern = /^[^=]+=\d+(\.\d+)?\/\d+(\.\d+)?(\/\d+(\.\d+)?)?$/

const seedKeyForm = "<key>:<organization>:<workspace>[:admin]"

/** One entry of SVC_API_KEYS (`n` counts from 1); messages name the entry by number, never the key. */
const parseSeedKey = (entry: string, n: number): Effect.Effect<SeedKey, ConfigurationError> => {
  const invalid = (why: string) => Effect.fail(new ConfigurationError({ message: `SVC_API_KEYS entry ${n}: ${why}` }))
  const parts = entry.split(":")
  if (parts.length < 3 || parts.length > 4 || parts.some((p) => p.length === 0)) {
    return invalid(`expected ${seedKeyForm}, got ${parts.length} part(s)`)
  }
  const [key, organizationId, workspaceId, role = "member"] = parts
  if (!isKeyShaped(key)) return invalid("the key must be 1 to 256 letters, digits or '_-.~+/='")
  if (!isOrganizationId(organizationId)) {
    const suggestion = !organizationId.startsWith("org_") && /^[A-Za-z0-9_-]{1,60}$/.test(organizationId)
      ? ` (write org_${organizationId})`
      : ""
    return invalid(
      `organization '${organizationId}' is not an organization id: org_ then letters, digits, '_' or '-'${suggestion}`
    )
  }
  if (!isWorkspaceName(workspaceId)) {
    return invalid(`workspace '${workspaceId}' must be 1 to 64 letters, digits, '_' or '-'`)
  }
  if (role !== "admin" && role !== "member") return invalid(`the role must be admin or member, got '${role}'`)
  return Effect.succeed({ key: Redacted.make(key), organizationId, workspaceId, role })
}

const parseSeedKeys = (raw: string) => Effect.forEach(list(raw), (entry, i) => parseSeedKey(entry, i + 1))

/**
 * The whole service on a real HTTP listener (ephemeral port) over a fresh
 * PostgreSQL database, with four seeded keys, plus a small client for it.
 * Built inside @effect/vitest's `layer`, so the service runs on TestClock.
 */
import { PgClient } from "@effect/sql-pg"
import { layer as vitestLayer } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { HttpServer } from "effect/http"
import * as Reactivity from "effect/reactivity/Reactivity"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ErrorBody } from "../../http/ErrorEnvelope.ts"
import { noLimits } from "../../src/access/LimitsConfig.ts"
import * as App from "../../src/App.ts"
import { defaultArtifactConfig } from "../../src/artifacts/ArtifactConfig.ts"
import { ServiceConfig, type ServiceConfigShape } from "../../src/config/ServiceConfig.ts"
import { noTelemetry } from "../../src/config/TelemetryConfig.ts"
import * as HostRuntimes from "../../src/documents/HostRuntimes.ts"
import { noMedia } from "../../src/media/MediaConfig.ts"
import { freePortNow } from "./FreePort.ts"
import { testDatabase } from "./TestDatabase.ts"

/**
 * Keys every test server accepts. `a` and `b` share an organization, not a
 * workspace; `admin` is an admin key of `a`'s organization and workspace.
 */
export const Keys = {
  a: "sk_test_acme_prod",
  b: "sk_test_acme_staging",
  c: "sk_test_globex_prod",
  admin: "sk_test_acme_admin"
} as const

/** The seed keys of every test server (SVC_API_KEYS as parsed). */
export const seedKeys: ServiceConfigShape["seedKeys"] = [
  { key: Redacted.make(Keys.a), organizationId: "org_acme", workspaceId: "prod" },
  { key: Redacted.make(Keys.b), organizationId: "org_acme", workspaceId: "staging" },
  { key: Redacted.make(Keys.c), organizationId: "org_globex", workspaceId: "prod" },
  { key: Redacted.make(Keys.admin), organizationId: "org_acme", workspaceId: "prod", role: "admin" }
]

/** A fixed 32-byte key (base64) so tests can also decrypt what the service stored. */
export const testMasterKey = Buffer.alloc(32, 7).toString("base64")

export const freePort = Effect.promise(freePortNow)

const listenOn = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => resolve(server))
  })

/** The first of `count` consecutive free ports (a supervisor's workers are runners on SVC_RUNNER_PORT + i). */
export const consecutiveFreePorts = (count: number) =>
  Effect.promise(async () => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const first = await listenOn(0)
      const address = first.address()
      const base = typeof address === "object" && address !== null ? address.port : 0
      const rest = await Promise.allSettled(Array.from({ length: count - 1 }, (_, i) => listenOn(base + 1 + i)))
      const held = [first, ...rest.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []))]
      await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))))
      if (held.length === count) return base
    }
    throw new Error(`no ${count} consecutive free ports`)
  })

/**
 * Managed workspaces of this test process's services: one root under the system temp directory
 * (mkdtemp makes it owner-only; the workspaces' uids must pass through it), removed at exit.
 */
export const testWorkspaceRoot = (() => {
  const root = mkdtempSync(join(tmpdir(), "svc-test-ws-"))
  chmodSync(root, 0o711)
  process.once("exit", () => rmSync(root, { recursive: true, force: true }))
  return root
})()

export const baseConfig = (databaseUrl: string | undefined, runnerPort: number): ServiceConfigShape => ({
  port: 0,
  host: "127.0.0.1",
  databaseUrl: databaseUrl === undefined ? Option.none() : Option.some(Redacted.make(databaseUrl)),
  dataDir: "./.svc-data",
  seedKeys,
  bands: {
    lite: { route: "scripted", strict: true },
    core: { route: "scripted", strict: true },
    frontier: { route: null, strict: false }
  },
  clusterRole: "runner",
  runnerHost: "127.0.0.1",
  runnerPort,
  runnerListenHost: "127.0.0.1",
  runnerTls: Option.none(),
  shutdownGraceMs: 10_000,
  processes: 1,
  maxBodyBytes: 65_536,
  quiet: true,
  masterKey: Option.some(Redacted.make(testMasterKey)),
  previousMasterKeys: [],
  allowPrivateUrls: true,
  dnsServers: [],
  trustedOrigins: [],
  publicUrl: "http://svc.test",
  // Any free port: preview URLs name http://svc.test:<that port>.
  previews: { port: 0, origin: Option.none() },
  routePrices: "",
  runStallMs: 120_000,
  recoveryIntervalMs: 30_000,
  maxParkMs: 14 * 24 * 60 * 60 * 1000,
  mcpIdleMs: 60_000,
  workspaceRoot: testWorkspaceRoot,
  workspaceSnapshotMaxBytes: 16 * 1024 * 1024,
  maxStepMs: 600_000,
  maxRunCents: null,
  maxDelegationDepth: 2,
  eventRetentionDays: 30,
  openai: { baseUrl: "http://127.0.0.1:9/v1", apiKey: Option.none() },
  anthropic: { baseUrl: "http://127.0.0.1:9/v1", apiKey: Option.none() },
  limits: noLimits,
  artifacts: defaultArtifactConfig,
  telemetry: noTelemetry,
  codehost: Option.none(),
  webSearch: Option.none(),
  // As a host without LibreOffice or ffmpeg: a test that needs them sets hostRuntimes: HostRuntimes.probe().
  hostRuntimes: HostRuntimes.none,
  media: noMedia({ baseUrl: "http://127.0.0.1:9/v1", apiKey: Option.none() })
})

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: unknown
}

export interface RequestOptions {
  readonly key?: string | null
  readonly body?: unknown
  readonly rawBody?: string
  readonly headers?: Record<string, string>
  /** `manual`: answer a redirect as it is (default: follow it). */
  readonly redirect?: "manual"
}

export class TestApi extends Context.Service<TestApi, {
  readonly url: string
  readonly request: (method: string, path: string, options?: RequestOptions) => Effect.Effect<Reply>
}>()("test/TestApi") {}

/** One request through the client in context (key a unless `options.key` says otherwise). */
export const request = (method: string, path: string, options?: RequestOptions): Effect.Effect<Reply, never, TestApi> =>
  Effect.flatMap(TestApi, (api) => api.request(method, path, options))

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

/** The body as JSON, or undefined when it is empty or not JSON (SSE, HTML). */
export const parseJson = (text: string): unknown => Option.getOrUndefined(decodeJson(text))

/** A client of the service at `url` (a service process too: provide it as TestApi). */
export const client = (url: string): TestApi["Service"] => ({
  url,
  request: (method: string, path: string, options: RequestOptions = {}) =>
    Effect.promise(async () => {
      const headers: Record<string, string> = { ...options.headers }
      const key = options.key === undefined ? Keys.a : options.key
      if (key !== null) headers["authorization"] = `Bearer ${key}`
      let body: string | undefined = options.rawBody
      if (options.body !== undefined) {
        body = JSON.stringify(options.body)
        headers["content-type"] ??= "application/json"
      }
      const response = await fetch(url + path, {
        method,
        headers,
        body: body ?? null,
        redirect: options.redirect ?? "follow"
      })
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, json: parseJson(text) }
    })
})

/** The service with the given configuration, reachable through TestApi. */
export const layerWith = (config: ServiceConfigShape) =>
  Layer.effect(TestApi)(
    Effect.map(HttpServer.HttpServer, (server) => client(HttpServer.formatAddress(server.address)))
  ).pipe(Layer.provideMerge(App.layer), Layer.provide(Layer.succeed(ServiceConfig)(config)))

/** The service on a fresh PostgreSQL database. */
export const layer = (overrides: Partial<ServiceConfigShape> = {}) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const db = yield* testDatabase
      const runnerPort = yield* freePort
      return layerWith({ ...baseConfig(db.url, runnerPort), ...overrides })
    })
  )

/**
 * The service on a fresh PostgreSQL database (`layer` with `overrides`), and a
 * SQL client of the test's own on that database (PgClient, SqlClient): to
 * inject a fault, or read and stage what the service stores.
 */
export const layerWithSql = (overrides: Partial<ServiceConfigShape> = {}, maxConnections = 1) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const db = yield* testDatabase
      const runnerPort = yield* freePort
      const sql = PgClient.layer({ url: Redacted.make(db.url), maxConnections }).pipe(Layer.orDie)
      return Layer.mergeAll(layerWith({ ...baseConfig(db.url, runnerPort), ...overrides }), sql)
    })
  ).pipe(Layer.provide(Reactivity.layer))

/** What building a fresh database, its migrations and the cluster may take. */
export const setupTimeout = 60_000

/**
 * A `describe` whose tests share one service and database (`layer` with
 * `overrides`), as `layer` from @effect/vitest does; `suiteWith` for a harness
 * that adds peers to the service.
 */
export const suite = (overrides: Partial<ServiceConfigShape> = {}) =>
  vitestLayer(layer(overrides), { timeout: setupTimeout })

export const suiteWith = <ROut, E>(harness: Layer.Layer<ROut, E>) => vitestLayer(harness, { timeout: setupTimeout })

/** The service's clock (TestClock) as the ISO timestamp it stamps resources with. */
export const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

// ---- assertions on replies --------------------------------------------------

/** Every X-Request-Id (and error request_id) the service issues. */
export const requestIdShape = /^req_[0-9A-Za-z]{22}$/

const decodeOrDie = <A>(schema: Schema.Decoder<A>, reply: Reply): Effect.Effect<A> =>
  Schema.decodeUnknownEffect(schema)(reply.json).pipe(
    Effect.mapError((e) => new Error(`unexpected body (${reply.status}): ${reply.text}\n${e.message}`)),
    Effect.orDie
  )

/** Asserts the status and decodes the body. */
export const expectOk = <A>(reply: Reply, status: number, schema: Schema.Decoder<A>): Effect.Effect<A> =>
  reply.status === status
    ? decodeOrDie(schema, reply)
    : Effect.die(new Error(`expected ${status}, got ${reply.status}: ${reply.text}`))

const Envelope = Schema.Struct({ error: ErrorBody })

/** Asserts an error envelope: status, type, code, and request_id equal to X-Request-Id. */
export const expectError = (reply: Reply, status: number, type: string, code: string): Effect.Effect<ErrorBody> =>
  Effect.gen(function*() {
    if (reply.status !== status) {
      return yield* Effect.die(new Error(`expected ${status}, got ${reply.status}: ${reply.text}`))
    }
    const { error } = yield* decodeOrDie(Envelope, reply)
    if (error.type !== type || error.code !== code) {
      return yield* Effect.die(new Error(`expected ${type}/${code}, got ${error.type}/${error.code}: ${reply.text}`))
    }
    const requestId = reply.headers.get("x-request-id")
    if (requestId === null || requestId !== error.request_id || !requestId.startsWith("req_")) {
      return yield* Effect.die(new Error(`request_id ${error.request_id} does not match X-Request-Id ${requestId}`))
    }
    return error
  })

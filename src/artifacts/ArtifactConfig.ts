/**
 * Configuration of the artifact store (README "Files and artifacts"), read
 * with the rest of ServiceConfig at start (`ServiceConfig.artifacts`):
 *
 * - SVC_ARTIFACT_STORE: `postgres` (default: a bytea table on the service's
 *   database, PostgreSQL or embedded PGlite), `s3` (an S3-compatible bucket),
 *   or `none` (every feature that needs storage answers 400
 *   `artifact_storage_unconfigured`).
 * - SVC_S3_BUCKET (required with `s3`), SVC_S3_REGION (default us-east-1),
 *   SVC_S3_ENDPOINT (an S3-compatible server; then path-style addressing),
 *   SVC_S3_PREFIX (prepended to every key), SVC_S3_ACCESS_KEY_ID and
 *   SVC_S3_SECRET_ACCESS_KEY (both or neither; neither: the AWS SDK's default
 *   credential chain, AWS_ACCESS_KEY_ID, profiles, instance roles, ...).
 * - SVC_FILE_MAX_BYTES: the largest file or artifact stored (default 32 MiB).
 * - SVC_ARTIFACT_RETENTION_DAYS: how long an artifact is kept (default 30).
 * - SVC_ARTIFACT_URL_TTL_SECONDS: how long a signed artifact URL works by default (default 3600).
 * - SVC_WORKSPACE_STORAGE_QUOTA_BYTES: the bytes a workspace may keep stored, its files and its
 *   artifacts together (default 1 GiB; 0: unlimited).
 * - SVC_MAX_CONCURRENT_UPLOADS_PER_KEY: uploads one API key may have in flight at once across
 *   the cluster (default 2; 0: unlimited).
 */
import { Config, Effect, Option, Redacted } from "effect"
import { ConfigurationError } from "../config/ConfigurationError.ts"

export interface S3StoreConfig {
  readonly kind: "s3"
  readonly bucket: string
  readonly region: string
  /** An S3-compatible endpoint (MinIO, R2, ...); null: AWS. */
  readonly endpoint: string | null
  readonly prefix: string
  /** Explicit credentials; null: the SDK's default provider chain. */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: Redacted.Redacted } | null
}

export type ArtifactStoreConfig = { readonly kind: "postgres" } | S3StoreConfig | { readonly kind: "none" }

export interface ArtifactConfig {
  readonly store: ArtifactStoreConfig
  readonly fileMaxBytes: number
  readonly retentionDays: number
  readonly urlTtlSeconds: number
  /** Bytes of files and artifacts a workspace may keep; null: unlimited. */
  readonly workspaceQuotaBytes: number | null
  /** `POST /v1/files` requests one API key may have in flight per process; null: unlimited. */
  readonly maxConcurrentUploadsPerKey: number | null
}

export const defaultArtifactConfig: ArtifactConfig = {
  store: { kind: "postgres" },
  fileMaxBytes: 32 * 1024 * 1024,
  retentionDays: 30,
  urlTtlSeconds: 3600,
  workspaceQuotaBytes: 1024 * 1024 * 1024,
  maxConcurrentUploadsPerKey: 2
}

const invalid = (message: string) => new ConfigurationError({ message })

const atLeastOne = (name: string, fallback: number) =>
  Effect.flatMap(
    Config.Int(name).pipe(Config.withDefault(fallback)),
    (n) => n >= 1 ? Effect.succeed(n) : Effect.fail(invalid(`${name} must be at least 1, got ${n}`))
  )

/** A whole number, 0 or more, where 0 means unlimited (null). */
const limitOrUnlimited = (name: string, fallback: number | null) =>
  Effect.flatMap(Config.String(name).pipe(Config.option), (raw) => {
    if (Option.isNone(raw)) return Effect.succeed(fallback)
    const n = Number(raw.value.trim())
    return /^\s*\d+\s*$/.test(raw.value) && Number.isSafeInteger(n)
      ? Effect.succeed(n === 0 ? null : n)
      : Effect.fail(invalid(`${name} must be a whole number, 0 (unlimited) or more, got '${raw.value}'`))
  })

const readS3 = Effect.gen(function*() {
  const setting = (name: string) => Config.String(name).pipe(Config.option, Effect.map(Option.getOrUndefined))
  const bucket = yield* setting("SVC_S3_BUCKET")
  if (bucket === undefined || bucket.trim() === "") return yield* invalid("SVC_ARTIFACT_STORE=s3 needs SVC_S3_BUCKET")
  const endpoint = yield* setting("SVC_S3_ENDPOINT")
  if (endpoint !== undefined && !/^https?:$/.test(URL.parse(endpoint)?.protocol ?? "")) {
    return yield* invalid(`SVC_S3_ENDPOINT must be a URL (http://host:port), got '${endpoint}'`)
  }
  const accessKeyId = yield* setting("SVC_S3_ACCESS_KEY_ID")
  const secretAccessKey = yield* Config.Redacted("SVC_S3_SECRET_ACCESS_KEY").pipe(
    Config.option,
    Effect.map(Option.getOrUndefined)
  )
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    return yield* invalid("SVC_S3_ACCESS_KEY_ID and SVC_S3_SECRET_ACCESS_KEY go together: set both or neither")
  }
  const config: S3StoreConfig = {
    kind: "s3",
    bucket: bucket.trim(),
    region: (yield* setting("SVC_S3_REGION")) ?? "us-east-1",
    endpoint: endpoint ?? null,
    prefix: (yield* setting("SVC_S3_PREFIX")) ?? "",
    credentials: accessKeyId === undefined || secretAccessKey === undefined ? null : { accessKeyId, secretAccessKey }
  }
  return config
})

/** The artifact settings from the environment; a malformed one stops the process at start. */
export const readArtifactConfig = Effect.gen(function*() {
  const kind = yield* Config.String("SVC_ARTIFACT_STORE").pipe(Config.withDefault("postgres"))
  const store: ArtifactStoreConfig = kind === "postgres" || kind === "none"
    ? { kind }
    : kind === "s3"
    ? yield* readS3
    : yield* invalid(`SVC_ARTIFACT_STORE must be postgres, s3 or none, got '${kind}'`)
  const config: ArtifactConfig = {
    store,
    fileMaxBytes: yield* atLeastOne("SVC_FILE_MAX_BYTES", defaultArtifactConfig.fileMaxBytes),
    retentionDays: yield* atLeastOne("SVC_ARTIFACT_RETENTION_DAYS", defaultArtifactConfig.retentionDays),
    urlTtlSeconds: yield* atLeastOne("SVC_ARTIFACT_URL_TTL_SECONDS", defaultArtifactConfig.urlTtlSeconds),
    workspaceQuotaBytes: yield* limitOrUnlimited(
      "SVC_WORKSPACE_STORAGE_QUOTA_BYTES",
      defaultArtifactConfig.workspaceQuotaBytes
    ),
    maxConcurrentUploadsPerKey: yield* limitOrUnlimited(
      "SVC_MAX_CONCURRENT_UPLOADS_PER_KEY",
      defaultArtifactConfig.maxConcurrentUploadsPerKey
    )
  }
  return config
})

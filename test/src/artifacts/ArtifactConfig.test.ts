/**
 * The artifact store's variables: defaults, the S3 settings, and every
 * malformed value refused at start with a message naming the variable.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import { defaultArtifactConfig, readArtifactConfig } from "../../../src/artifacts/ArtifactConfig.ts"

const read = (env: Record<string, string>) =>
  readArtifactConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))

describe("artifact configuration", () => {
  it.effect("defaults: the PostgreSQL store, 32 MiB, 30 days, one-hour URLs, 1 GiB a workspace, 2 uploads a key", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* read({}), defaultArtifactConfig)
      assert.deepStrictEqual(defaultArtifactConfig, {
        store: { kind: "postgres" },
        fileMaxBytes: 33_554_432,
        retentionDays: 30,
        urlTtlSeconds: 3600,
        workspaceQuotaBytes: 1_073_741_824,
        maxConcurrentUploadsPerKey: 2
      })
      assert.deepStrictEqual((yield* read({ SVC_ARTIFACT_STORE: "none" })).store, { kind: "none" })
      assert.deepInclude(
        yield* read({ SVC_WORKSPACE_STORAGE_QUOTA_BYTES: "5000", SVC_MAX_CONCURRENT_UPLOADS_PER_KEY: "1" }),
        { workspaceQuotaBytes: 5000, maxConcurrentUploadsPerKey: 1 }
      )
      assert.deepInclude(
        yield* read({ SVC_WORKSPACE_STORAGE_QUOTA_BYTES: "0", SVC_MAX_CONCURRENT_UPLOADS_PER_KEY: "0" }),
        { workspaceQuotaBytes: null, maxConcurrentUploadsPerKey: null }
      )
    }))

  it.effect("s3: bucket, region, endpoint, prefix and explicit credentials (or the SDK's chain)", () =>
    Effect.gen(function*() {
      const config = yield* read({
        SVC_ARTIFACT_STORE: "s3",
        SVC_S3_BUCKET: "svc-artifacts",
        SVC_S3_REGION: "eu-west-3",
        SVC_S3_ENDPOINT: "http://127.0.0.1:9000",
        SVC_S3_PREFIX: "prod/",
        SVC_S3_ACCESS_KEY_ID: "AKIA",
        SVC_S3_SECRET_ACCESS_KEY: "secret",
        SVC_FILE_MAX_BYTES: "1024",
        SVC_ARTIFACT_RETENTION_DAYS: "7",
        SVC_ARTIFACT_URL_TTL_SECONDS: "60"
      })
      assert.strictEqual(config.store.kind, "s3")
      if (config.store.kind !== "s3") return
      assert.deepInclude(config.store, {
        bucket: "svc-artifacts",
        region: "eu-west-3",
        endpoint: "http://127.0.0.1:9000",
        prefix: "prod/"
      })
      assert.strictEqual(config.store.credentials?.accessKeyId, "AKIA")
      assert.strictEqual(Redacted.value(config.store.credentials?.secretAccessKey ?? Redacted.make("")), "secret")
      assert.deepInclude(config, { fileMaxBytes: 1024, retentionDays: 7, urlTtlSeconds: 60 })
      const chain = yield* read({ SVC_ARTIFACT_STORE: "s3", SVC_S3_BUCKET: "b" })
      assert.deepStrictEqual(chain.store, {
        kind: "s3",
        bucket: "b",
        region: "us-east-1",
        endpoint: null,
        prefix: "",
        credentials: null
      })
    }))

  it.effect.each(
    [
      [{ SVC_ARTIFACT_STORE: "disk" }, "SVC_ARTIFACT_STORE must be postgres, s3 or none, got 'disk'"],
      [{ SVC_ARTIFACT_STORE: "s3" }, "SVC_ARTIFACT_STORE=s3 needs SVC_S3_BUCKET"],
      [
        { SVC_ARTIFACT_STORE: "s3", SVC_S3_BUCKET: "b", SVC_S3_ENDPOINT: "minio:9000 " },
        "SVC_S3_ENDPOINT must be a URL (http://host:port), got 'minio:9000 '"
      ],
      [
        { SVC_ARTIFACT_STORE: "s3", SVC_S3_BUCKET: "b", SVC_S3_ACCESS_KEY_ID: "AKIA" },
        "SVC_S3_ACCESS_KEY_ID and SVC_S3_SECRET_ACCESS_KEY go together: set both or neither"
      ],
      [{ SVC_FILE_MAX_BYTES: "0" }, "SVC_FILE_MAX_BYTES must be at least 1, got 0"],
      [{ SVC_ARTIFACT_RETENTION_DAYS: "0" }, "SVC_ARTIFACT_RETENTION_DAYS must be at least 1, got 0"],
      [{ SVC_ARTIFACT_URL_TTL_SECONDS: "-5" }, "SVC_ARTIFACT_URL_TTL_SECONDS must be at least 1, got -5"],
      [
        { SVC_WORKSPACE_STORAGE_QUOTA_BYTES: "1GiB" },
        "SVC_WORKSPACE_STORAGE_QUOTA_BYTES must be a whole number, 0 (unlimited) or more, got '1GiB'"
      ],
      [
        { SVC_MAX_CONCURRENT_UPLOADS_PER_KEY: "-1" },
        "SVC_MAX_CONCURRENT_UPLOADS_PER_KEY must be a whole number, 0 (unlimited) or more, got '-1'"
      ]
    ] as const
  )("%j is refused at start", ([env, message]) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(read(env))
      assert.strictEqual(error.message, message)
    }))
})

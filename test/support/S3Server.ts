/**
 * A real S3-compatible server for the S3 artifact store: `s3rver` on an
 * ephemeral port of 127.0.0.1 over a temporary directory, with one bucket,
 * checking request signatures against its fixed credentials; and an SDK
 * client of the test's own to look into the bucket. Closed with its scope.
 */
import { GetObjectCommand, NoSuchKey, S3Client } from "@aws-sdk/client-s3"
import { Effect, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import S3rver from "s3rver"
import type { S3StoreConfig } from "../../src/artifacts/ArtifactConfig.ts"

export const bucket = "svc-test"
/** s3rver's own credentials: it rejects requests signed with others. */
const credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" }

export const start = Effect.acquireRelease(
  Effect.promise(async () => {
    const directory = mkdtempSync(join(tmpdir(), "svc-s3rver-"))
    const server = new S3rver({
      address: "127.0.0.1",
      port: 0,
      silent: true,
      directory,
      configureBuckets: [{ name: bucket }]
    })
    const { port } = await server.run()
    return { server, directory, endpoint: `http://127.0.0.1:${port}` }
  }),
  ({ server, directory }) =>
    Effect.promise(() => server.close().finally(() => rmSync(directory, { recursive: true, force: true })))
)

/** The store configuration of a service using this server, keys under `prefix`. */
export const storeConfig = (endpoint: string, prefix: string): S3StoreConfig => ({
  kind: "s3",
  bucket,
  region: "us-east-1",
  endpoint,
  prefix,
  credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: Redacted.make(credentials.secretAccessKey) }
})

/** The object under `key` as the server holds it (the test's own client), or undefined. */
export const objectAt = (endpoint: string, key: string) =>
  Effect.promise(async () => {
    const client = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true, credentials })
    try {
      const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
      return { contentType: object.ContentType, bytes: await object.Body?.transformToByteArray() }
    } catch (error) {
      if (error instanceof NoSuchKey) return undefined
      throw error
    } finally {
      client.destroy()
    }
  })

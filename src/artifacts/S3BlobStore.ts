/**
 * The S3 artifact store (SVC_ARTIFACT_STORE=s3): objects in one bucket of AWS
 * S3 or any S3-compatible server, through the AWS SDK v3, keys prefixed with
 * SVC_S3_PREFIX. With SVC_S3_ENDPOINT (a server of one's own) requests use
 * path-style addressing and send checksums only where the API requires them,
 * as servers that predate the SDK's default CRC checksums expect.
 */
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig
} from "@aws-sdk/client-s3"
import { Effect, Layer, Option, Redacted } from "effect"
import type { S3StoreConfig } from "./ArtifactConfig.ts"
import { BlobStore, BlobStoreFailed } from "./BlobStore.ts"

const clientConfig = (config: S3StoreConfig): S3ClientConfig => ({
  region: config.region,
  ...(config.endpoint === null ? {} : {
    endpoint: config.endpoint,
    forcePathStyle: true,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED"
  }),
  ...(config.credentials === null ? {} : {
    credentials: {
      accessKeyId: config.credentials.accessKeyId,
      secretAccessKey: Redacted.value(config.credentials.secretAccessKey)
    }
  })
})

/** The store on `config`'s bucket; the client is closed with the layer. */
export const layer = (config: S3StoreConfig) =>
  Layer.effect(BlobStore)(
    Effect.gen(function*() {
      const client = yield* Effect.acquireRelease(
        Effect.sync(() => new S3Client(clientConfig(config))),
        (c) => Effect.sync(() => c.destroy())
      )
      const Bucket = config.bucket
      const objectKey = (key: string) => config.prefix + key
      const call = <A>(
        operation: BlobStoreFailed["operation"],
        key: string,
        run: (signal: AbortSignal) => Promise<A>
      ) => Effect.tryPromise({ try: run, catch: (cause) => new BlobStoreFailed({ operation, key, cause }) })

      return BlobStore.of({
        put: Effect.fn("S3BlobStore.put")(function*(key: string, bytes: Uint8Array, contentType: string) {
          yield* call("put", key, (abortSignal) =>
            client.send(new PutObjectCommand({ Bucket, Key: objectKey(key), Body: bytes, ContentType: contentType }), {
              abortSignal
            }))
        }),
        get: Effect.fn("S3BlobStore.get")(function*(key: string) {
          const object = yield* call("get", key, (abortSignal) =>
            client.send(new GetObjectCommand({ Bucket, Key: objectKey(key) }), { abortSignal })).pipe(
              Effect.map(Option.some),
              Effect.catchIf((e) =>
                e.cause instanceof NoSuchKey, () =>
                Effect.succeed(Option.none()))
            )
          if (Option.isNone(object)) {
            return Option.none<Uint8Array>()
          }
          const body = object.value.Body
          if (body === undefined) {
            return Option.some(new Uint8Array(0))
          }
          return Option.some<Uint8Array>(
            yield* call("get", key, () =>
              body.transformToByteArray())
          )
        }),
        delete: Effect.fn("S3BlobStore.delete")(function*(key: string) {
          yield* call("delete", key, (abortSignal) =>
            client.send(new DeleteObjectCommand({ Bucket, Key: objectKey(key) }), { abortSignal }))
        }),
        copy: Effect.fn("S3BlobStore.copy")(function*(from: string, to: string) {
          // CopySource is `<bucket>/<key>`, URL-encoded.
          const source = `${Bucket}/${objectKey(from).split("/").map(encodeURIComponent).join("/")}`
          yield* call("copy", from, (abortSignal) =>
            client.send(new CopyObjectCommand({ Bucket, Key: objectKey(to), CopySource: source }), { abortSignal }))
        })
      })
    })
  )

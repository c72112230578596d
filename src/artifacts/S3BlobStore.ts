/**
 * The S3 artifact store (SVC_ARTIFACT_STORE=s3): objects in one bucket of AWS
 * S3 or any S3-compatible server, through the AWS SDK v3, keys prefixed with
 * SVC_S3_PREFIX. With SVC_S3_ENDPOINT (a server of one's own) requests use
 * path-style addressing and send checksums only where the API requires them,
 * as servers that predate the SDK's default CRC checksums expect.
 *
 * A writer holds at most `partBytes` of an object: an object that fits is one
 * PutObject when finished; a larger one is a multipart upload, a part sent
 * each time `partBytes` have come (S3's parts are at least 5 MiB but the
 * last), completed when finished and aborted otherwise. A multipart object is
 * created before its content type is known: it keeps S3's default, as the
 * service serves the type it recorded in the database, never the object's.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand
} from "@aws-sdk/client-s3"
import { Effect, Layer, Option, Redacted } from "effect"
import type { S3StoreConfig } from "./ArtifactConfig.ts"
import { BlobStore, BlobStoreFailed, type BlobWriter, putThrough } from "./BlobStore.ts"

/** Bytes per part of a multipart upload (S3: at least 5 MiB, but the last). */
export const partBytes = 8 * 1024 * 1024

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

      const writer = Effect.fn("S3BlobStore.writer")(function*(key: string) {
        const Key = objectKey(key)
        let pieces: Array<Uint8Array> = []
        let held = 0
        let uploadId: string | undefined
        const parts: Array<{ ETag: string | undefined; PartNumber: number }> = []
        const take = () => {
          const body = Buffer.concat(pieces, held)
          pieces = []
          held = 0
          return body
        }
        const sendPart = (body: Uint8Array) =>
          Effect.gen(function*() {
            const UploadId = uploadId ??
              (yield* call(
                "put",
                key,
                (abortSignal) => client.send(new CreateMultipartUploadCommand({ Bucket, Key }), { abortSignal })
              )).UploadId
            if (UploadId === undefined) {
              return yield* new BlobStoreFailed({ operation: "put", key, cause: "no UploadId" })
            }
            uploadId = UploadId
            const PartNumber = parts.length + 1
            const sent = yield* call(
              "put",
              key,
              (abortSignal) =>
                client.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: body }), { abortSignal })
            )
            parts.push({ ETag: sent.ETag, PartNumber })
          })
        const handle: BlobWriter = {
          write: (bytes) =>
            Effect.suspend(() => {
              pieces.push(bytes)
              held += bytes.byteLength
              return held >= partBytes ? sendPart(take()) : Effect.void
            }),
          finish: (contentType) =>
            Effect.suspend(() => {
              if (uploadId === undefined) {
                const Body = take()
                return call(
                  "put",
                  key,
                  (abortSignal) =>
                    client.send(new PutObjectCommand({ Bucket, Key, Body, ContentType: contentType }), { abortSignal })
                )
              }
              return Effect.andThen(held > 0 ? sendPart(take()) : Effect.void, () =>
                call("put", key, (abortSignal) =>
                  client.send(
                    new CompleteMultipartUploadCommand({
                      Bucket,
                      Key,
                      UploadId: uploadId,
                      MultipartUpload: { Parts: parts }
                    }),
                    { abortSignal }
                  )))
            }).pipe(Effect.asVoid),
          abort: Effect.suspend(() => {
            pieces = []
            held = 0
            const UploadId = uploadId
            if (UploadId === undefined) {
              return Effect.void
            }
            return call(
              "put",
              key,
              (abortSignal) => client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }), { abortSignal })
            ).pipe(
              Effect.asVoid,
              Effect.catch((e) => Effect.logWarning(`artifact store: could not abort the upload of '${key}'`, e.cause))
            )
          })
        }
        return handle
      })

      return BlobStore.of({
        writer,
        put: putThrough(writer),
        sweep: () => Effect.succeed(0),
        get: Effect.fn("S3BlobStore.get")(function*(key: string) {
          const object = yield* call(
            "get",
            key,
            (abortSignal) => client.send(new GetObjectCommand({ Bucket, Key: objectKey(key) }), { abortSignal })
          ).pipe(
            Effect.map(Option.some),
            Effect.catchIf((e) => e.cause instanceof NoSuchKey, () => Effect.succeed(Option.none()))
          )
          if (Option.isNone(object)) {
            return Option.none<Uint8Array>()
          }
          const body = object.value.Body
          if (body === undefined) {
            return Option.some(new Uint8Array(0))
          }
          return Option.some<Uint8Array>(
            yield* call("get", key, () => body.transformToByteArray())
          )
        }),
        delete: Effect.fn("S3BlobStore.delete")(function*(key: string) {
          yield* call(
            "delete",
            key,
            (abortSignal) => client.send(new DeleteObjectCommand({ Bucket, Key: objectKey(key) }), { abortSignal })
          )
        }),
        copy: Effect.fn("S3BlobStore.copy")(function*(from: string, to: string) {
          // CopySource is `<bucket>/<key>`, URL-encoded.
          const source = `${Bucket}/${objectKey(from).split("/").map(encodeURIComponent).join("/")}`
          yield* call(
            "copy",
            from,
            (abortSignal) =>
              client.send(new CopyObjectCommand({ Bucket, Key: objectKey(to), CopySource: source }), { abortSignal })
          )
        })
      })
    })
  )

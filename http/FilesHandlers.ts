/** Handlers of files, artifacts and signed artifact URLs. */
import { Effect } from "effect"
import { HttpMiddleware } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { artifactMetadata, FileObject } from "../domain/Artifact.ts"
import { UploadSlots } from "../src/access/UploadSlots.ts"
import { Artifacts } from "../src/artifacts/Artifacts.ts"
import { Files } from "../src/artifacts/Files.ts"
import { ServiceConfig } from "../src/config/ServiceConfig.ts"
import { Api } from "./Api.ts"
import { authed } from "./ApiMiddleware.ts"
import { bytesResponse } from "./BytesResponse.ts"
import { envelope } from "./ErrorEnvelope.ts"
import { readUpload } from "./FileUpload.ts"
import { idempotent } from "./Idempotent.ts"

export const FilesHandlers = HttpApiBuilder.group(Api, "files", (handlers) =>
  Effect.gen(function*() {
    const files = yield* Files
    const slots = yield* UploadSlots
    const { artifacts: config } = yield* ServiceConfig
    return handlers
      .handle("upload", (route) =>
        authed((p) =>
          Effect.gen(function*() {
            // One of the key's upload slots, before the body is read; the bytes are streamed to the store.
            yield* slots.acquire(p)
            // Under an Idempotency-Key the quota is checked once the bytes are in, so that a replay answers the first File.
            const quotaAsItArrives = route.headers["idempotency-key"] === undefined
            const upload = yield* readUpload(
              route.payload,
              config.fileMaxBytes,
              (incoming) => files.receive(p, incoming, quotaAsItArrives)
            )
            // What an Idempotency-Key is checked against: the part's name and media type, and the bytes' hash.
            const body = { filename: upload.filename, mediaType: upload.mediaType, data: upload.received.row.sha256 }
            const store = idempotent(
              { ...route, payload: body },
              FileObject,
              (caller) => files.commit(caller, upload.received)
            )
            return yield* store(p)
          }).pipe(Effect.scoped)
        ))
      .handle("list", ({ query }) => authed((p) => files.list(p, query)))
      .handle("get", ({ params }) => authed((p) => files.describe(p, params.id)))
      .handle(
        "content",
        ({ params }) =>
          authed((p) => Effect.map(files.content(p, params.id), ({ file, data }) => bytesResponse(data, file)))
      )
      .handle("delete", ({ params }) => authed((p) => files.remove(p, params.id)))
  }))

export const ArtifactsHandlers = HttpApiBuilder.group(
  Api,
  "artifacts",
  (handlers) =>
    Effect.map(Artifacts, (artifacts) =>
      handlers
        .handle("content", ({ params }) =>
          authed((p) =>
            Effect.gen(function*() {
              const artifact = yield* artifacts.get(p, params.id)
              return bytesResponse(yield* artifacts.content(artifact), artifact)
            })
          ))
        .handle("metadata", ({ params }) => authed((p) => Effect.map(artifacts.get(p, params.id), artifactMetadata))))
)

export const ArtifactLinksHandlers = HttpApiBuilder.group(
  Api,
  "artifactLinks",
  (handlers) =>
    Effect.map(Artifacts, (artifacts) =>
      handlers.handle("download", ({ params, query }) =>
        Effect.gen(function*() {
          const artifact = yield* artifacts.verifyLink(params.id, query.expires, query.signature)
          return bytesResponse(yield* artifacts.content(artifact), artifact)
        }).pipe(
          envelope,
          // The URL is the grant: it stays out of the access log.
          HttpMiddleware.withLoggerDisabled
        )))
)

/** Handlers of files, artifacts and signed artifact URLs. */
import { Effect } from "effect"
import { HttpMiddleware } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { artifactMetadata } from "../domain/Artifact.ts"
import { Artifacts } from "../src/artifacts/Artifacts.ts"
import { Files } from "../src/artifacts/Files.ts"
import { ServiceConfig } from "../src/config/ServiceConfig.ts"
import { Api } from "./Api.ts"
import { CurrentPrincipal } from "./ApiMiddleware.ts"
import { bytesResponse } from "./BytesResponse.ts"
import { envelope } from "./ErrorEnvelope.ts"
import { readUpload } from "./FileUpload.ts"

export const FilesHandlers = HttpApiBuilder.group(Api, "files", (handlers) =>
  Effect.gen(function*() {
    const files = yield* Files
    const { artifacts: config } = yield* ServiceConfig
    return handlers
      .handle("upload", ({ payload }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          return yield* files.upload(principal, yield* readUpload(payload, config.fileMaxBytes))
        }).pipe(envelope))
      .handle("list", ({ query }) => Effect.flatMap(CurrentPrincipal, (p) => files.list(p, query)).pipe(envelope))
      .handle(
        "get",
        ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => files.describe(p, params.id)).pipe(envelope)
      )
      .handle("content", ({ params }) =>
        Effect.flatMap(CurrentPrincipal, (p) => files.content(p, params.id)).pipe(
          Effect.map(({ file, data }) => bytesResponse(data, file)),
          envelope
        ))
      .handle(
        "delete",
        ({ params }) => Effect.flatMap(CurrentPrincipal, (p) => files.remove(p, params.id)).pipe(envelope)
      )
  }))

export const ArtifactsHandlers = HttpApiBuilder.group(
  Api,
  "artifacts",
  (handlers) =>
    Effect.map(Artifacts, (artifacts) =>
      handlers
        .handle("content", ({ params }) =>
          Effect.gen(function*() {
            const artifact = yield* artifacts.get(yield* CurrentPrincipal, params.id)
            return bytesResponse(yield* artifacts.content(artifact), artifact)
          }).pipe(envelope))
        .handle("metadata", ({ params }) =>
          Effect.flatMap(CurrentPrincipal, (p) => artifacts.get(p, params.id)).pipe(
            Effect.map(artifactMetadata),
            envelope
          )))
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

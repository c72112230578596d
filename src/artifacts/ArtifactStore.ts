/**
 * The BlobStore SVC_ARTIFACT_STORE names: PostgreSQL (the default), S3, or
 * none, whose every operation fails (the services refuse with
 * `artifact_storage_unconfigured` before they get that far).
 */
import { Effect, Layer } from "effect"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import * as PgBlobStore from "../store/PgBlobStore.ts"
import { BlobStore, BlobStoreFailed } from "./BlobStore.ts"
import * as S3BlobStore from "./S3BlobStore.ts"

const unconfigured = BlobStore.of({
  writer: (key) => Effect.fail(new BlobStoreFailed({ operation: "put", key, cause: "SVC_ARTIFACT_STORE=none" })),
  sweep: () => Effect.succeed(0),
  put: (key) => Effect.fail(new BlobStoreFailed({ operation: "put", key, cause: "SVC_ARTIFACT_STORE=none" })),
  get: (key) => Effect.fail(new BlobStoreFailed({ operation: "get", key, cause: "SVC_ARTIFACT_STORE=none" })),
  delete: (key) => Effect.fail(new BlobStoreFailed({ operation: "delete", key, cause: "SVC_ARTIFACT_STORE=none" })),
  copy: (from) => Effect.fail(new BlobStoreFailed({ operation: "copy", key: from, cause: "SVC_ARTIFACT_STORE=none" }))
})

export const layer = Layer.unwrap(
  Effect.map(ServiceConfig, ({ artifacts: { store } }) => {
    switch (store.kind) {
      case "postgres":
        return PgBlobStore.layer
      case "s3":
        return S3BlobStore.layer(store)
      case "none":
        return Layer.succeed(BlobStore)(unconfigured)
    }
  })
)

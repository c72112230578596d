/**
 * Minting an API key on the configured storage (DATABASE_URL, or the
 * embedded database under SVC_DATA_DIR while the service is stopped). Loaded
 * by `keys create` alone: the other commands talk to the service over HTTP
 * and need none of the storage.
 */
import { Effect, Layer, Redacted } from "effect"
import { ApiKeys, isValidScopeName } from "../access/ApiKeys.ts"
import { ServiceConfig } from "../config/ServiceConfig.ts"
import { IdGenerator } from "../IdGenerator.ts"
import * as Database from "../store/Database.ts"
import * as Migrations from "../store/Migrations.ts"
import { Usage } from "./CommandFailure.ts"

const Storage = ApiKeys.layer.pipe(
  Layer.provideMerge(Migrations.layer),
  Layer.provideMerge(Database.layer),
  Layer.provide([ServiceConfig.layer, IdGenerator.layer])
)

export const mint = (org: string, workspace: string) =>
  Effect.gen(function*() {
    if (!isValidScopeName(org) || !isValidScopeName(workspace)) {
      return yield* new Usage({
        message:
          "invalid --org or --workspace: names use letters, digits, '_' and '-' (for example --org org_acme --workspace prod)"
      })
    }
    const minted = yield* Effect.flatMap(ApiKeys, (keys) => keys.mint(org, workspace, "cli")).pipe(
      Effect.provide(Storage)
    )
    return { organizationId: minted.organizationId, workspaceId: minted.workspaceId, key: Redacted.value(minted.key) }
  })

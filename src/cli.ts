/**
 * Operator CLI: `npm run cli -- keys create --org <organization> --workspace <workspace>`
 * mints an API key on the configured storage (DATABASE_URL, or the embedded
 * database under SVC_DATA_DIR while the service is stopped) and prints it once.
 */
import { parseArgs } from "node:util"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer, Redacted } from "effect"
import { ApiKeys, isValidScopeName } from "./auth/ApiKeys.ts"
import { IdGenerator } from "./IdGenerator.ts"
import { ServiceConfig } from "./config/ServiceConfig.ts"
import * as Database from "./store/Database.ts"
import * as Migrations from "./store/Migrations.ts"

const usage = `usage: npm run cli -- keys create --org <organization> --workspace <workspace>

  Mints an API key for <workspace> of <organization> and prints it once.
  Names use letters, digits, '_' and '-' (for example --org org_acme --workspace prod).`

const Storage = ApiKeys.layer.pipe(
  Layer.provideMerge(Migrations.layer),
  Layer.provideMerge(Database.layer),
  Layer.provide([ServiceConfig.layer, IdGenerator.layer])
)

const fail = (message: string) => Effect.flatMap(Console.error(`${message}\n\n${usage}`), () => Effect.sync(() => process.exit(2)))

const main = Effect.gen(function*() {
  const { positionals, values } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    strict: false,
    options: { org: { type: "string" }, workspace: { type: "string" } }
  })
  if (positionals[0] !== "keys" || positionals[1] !== "create") return yield* fail("unknown command")
  const org = values["org"]
  const workspace = values["workspace"]
  if (typeof org !== "string" || typeof workspace !== "string") return yield* fail("--org and --workspace are required")
  if (!isValidScopeName(org) || !isValidScopeName(workspace)) return yield* fail("invalid --org or --workspace")
  const minted = yield* Effect.flatMap(ApiKeys, (keys) => keys.mint(org, workspace, "cli")).pipe(Effect.provide(Storage))
  yield* Console.error(`API key for organization ${minted.organizationId}, workspace ${minted.workspaceId} (shown only now):`)
  yield* Console.log(Redacted.value(minted.key))
})

main.pipe(NodeRuntime.runMain)

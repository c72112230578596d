/**
 * `keys create --org <organization> --workspace <workspace>`: the operator's
 * command, on the storage itself (see KeyMint.ts); the key is printed once,
 * alone on stdout.
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { Output } from "./Output.ts"

const create = Command.make("create", {
  org: Flag.String("org").pipe(Flag.withDescription("The organization, e.g. org_acme")),
  workspace: Flag.String("workspace").pipe(Flag.withDescription("The workspace, e.g. prod"))
}, (flags) =>
  Effect.gen(function*() {
    const out = yield* Output
    const { mint } = yield* Effect.promise(() => import("./KeyMint.ts"))
    const minted = yield* mint(flags.org, flags.workspace)
    yield* out.error(
      `API key for organization ${minted.organizationId}, workspace ${minted.workspaceId} (shown only now):`
    )
    yield* out.line(minted.key)
  })).pipe(
    Command.withDescription(
      "Mint an API key on the configured storage (DATABASE_URL or SVC_DATA_DIR) and print it once"
    )
  )

export const keys = Command.make("keys").pipe(
  Command.withDescription("Operator: API keys"),
  Command.withSubcommands([create])
)

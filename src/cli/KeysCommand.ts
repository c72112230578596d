/**
 * `keys create|list|revoke`: the organization's API keys through the API
 * (POST /v1/api-keys, GET /v1/api-keys, POST /v1/api-keys/:id/revoke), as
 * an admin key (`--api-key`). `create` prints the new key alone on stdout
 * (it is shown only once) and what it is on stderr.
 */
import { checked, ids, normalized } from "agent-service/client"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { type ApiKey, ApiKeyCreate } from "../../domain/ApiKey.ts"
import { client } from "./Connection.ts"
import { json } from "./Flags.ts"
import { Output } from "./Output.ts"
import { listCommand } from "./PagedList.ts"

const keyBody = checked(ApiKeyCreate, "key")

/** `id  prefix  workspace  role  createdAt  lastUsedAt|never  revoked <at>|active  name`. */
const keyLine = (key: ApiKey) =>
  [
    key.id,
    key.prefix === "" ? "-" : key.prefix,
    key.workspace,
    key.role,
    key.createdAt,
    key.lastUsedAt ?? "never",
    key.revokedAt === null ? "active" : `revoked ${key.revokedAt}`,
    key.name
  ].join("  ")

const create = Command.make("create", {
  name: Flag.String("name").pipe(Flag.withDescription("What the key is for, e.g. ci-deploys")),
  workspace: Flag.String("workspace").pipe(
    Flag.optional,
    Flag.withDescription("Its workspace (default: the workspace of --api-key)")
  ),
  role: Flag.Literals("role", ["member", "admin"]).pipe(
    Flag.optional,
    Flag.withDescription("member (default) or admin")
  ),
  json
}, (flags) =>
  Effect.gen(function*() {
    const api = yield* client
    const out = yield* Output
    const payload = yield* keyBody({
      name: flags.name,
      ...Option.match(flags.workspace, { onNone: () => ({}), onSome: (workspace) => ({ workspace }) }),
      ...Option.match(flags.role, { onNone: () => ({}), onSome: (role) => ({ role }) })
    })
    const created = yield* normalized(api.apiKeys.create({ payload, headers: {} }))
    if (flags.json) return yield* out.line(JSON.stringify(created, null, 2))
    yield* out.error(
      `API key ${created.id} (${created.role}, workspace ${created.workspace}): shown only now, store it safely`
    )
    yield* out.line(created.key)
  })).pipe(Command.withDescription("Create an API key (admin key); prints the key once"))

const list = listCommand({
  plural: "keys",
  command: "keys list",
  description: "List the organization's API keys, newest first (admin key)",
  fetch: (api, query) => api.apiKeys.list({ query }),
  line: keyLine
})

const revoke = Command.make("revoke", {
  id: Argument.String("id").pipe(Argument.withDescription("The key's id (key_...)")),
  json
}, (args) =>
  Effect.gen(function*() {
    const api = yield* client
    const out = yield* Output
    const id = yield* ids.apiKey(args.id)
    const revoked = yield* normalized(api.apiKeys.revoke({ params: { id }, headers: {} }))
    yield* out.line(args.json ? JSON.stringify(revoked, null, 2) : keyLine(revoked))
  })).pipe(Command.withDescription("Revoke an API key (admin key): refused everywhere within 5 s"))

export const keys = Command.make("keys").pipe(
  Command.withDescription("API keys of your organization (an admin key)"),
  Command.withSubcommands([create, list, revoke])
)

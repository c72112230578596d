/**
 * `secrets list|get|create|update|delete|rotate`: the workspace's secrets
 * (`/v1/secrets`). A value is write-only: it is sent, never shown; read it
 * from stdin (`--stdin value`) to keep it out of the shell's history.
 */
import { checked, ids } from "agent-service/client"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { type Secret, SecretCreate, SecretPatch, SecretRotate } from "../../domain/Secret.ts"
import { itemChange, resourceCommands } from "./ResourceCommands.ts"

const createBody = checked(SecretCreate, "secret")
const patchBody = checked(SecretPatch, "secret change")
const rotateBody = checked(SecretRotate, "secret rotation")

/** `id  name  source  updatedAt`. */
const secretLine = (s: Secret) => [s.id, s.name, s.source, s.updatedAt].join("  ")

const commands = resourceCommands<Secret>({
  command: "secrets",
  singular: "secret",
  plural: "secrets",
  line: secretLine,
  list: (api, query) => api.secrets.list({ query }),
  get: (api, id) => Effect.flatMap(ids.secret(id), (id) => api.secrets.get({ params: { id } })),
  create: (api, body) => Effect.flatMap(createBody(body), (payload) => api.secrets.create({ payload, headers: {} })),
  update: (api, id, body) =>
    Effect.flatMap(
      Effect.all([ids.secret(id), patchBody(body)]),
      ([id, payload]) => api.secrets.update({ params: { id }, payload })
    ),
  remove: (api, id) => Effect.flatMap(ids.secret(id), (id) => api.secrets.delete({ params: { id } }))
})

const rotate = itemChange({
  name: "rotate",
  singular: "secret",
  description: "Replace a secret's value: rotate <id> --stdin value < new-value.txt",
  run: (api, id, body) =>
    Effect.flatMap(
      Effect.all([ids.secret(id), rotateBody(body)]),
      ([id, payload]) => api.secrets.rotate({ params: { id }, payload, headers: {} })
    ),
  line: secretLine
})

export const secrets = Command.make("secrets").pipe(
  Command.withDescription("Secrets (values write-only): list, get, create, update, delete, rotate"),
  Command.withSubcommands([commands.list, commands.get, commands.create, commands.update, commands.delete, rotate])
)

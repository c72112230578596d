/**
 * `hooks list|get|create|update|delete|rotate-secret|test`: the workspace's
 * tool approval hooks (`/v1/tool-approval-hooks`). The signing secret is
 * write-only; read it from stdin with `--stdin secret`.
 */
import { checked, ids } from "agent-service/client"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { HookCreate, HookPatch, RotateSigningSecret, type ToolApprovalHook } from "../../domain/ToolApprovalHook.ts"
import { itemAction, itemChange, resourceCommands } from "./ResourceCommands.ts"

const createBody = checked(HookCreate, "hook")
const patchBody = checked(HookPatch, "hook change")
const rotateBody = checked(RotateSigningSecret, "signing secret")

/** `id  name  url  enabled|disabled  on error <policy>`. */
const hookLine = (h: ToolApprovalHook) =>
  [h.id, h.name, h.url, h.enabled ? "enabled" : "disabled", `on error ${h.onHookError}`].join("  ")

const commands = resourceCommands<ToolApprovalHook>({
  command: "hooks",
  singular: "hook",
  plural: "hooks",
  line: hookLine,
  list: (api, query) => api.hooks.list({ query }),
  get: (api, id) => Effect.flatMap(ids.hook(id), (id) => api.hooks.get({ params: { id } })),
  create: (api, body) => Effect.flatMap(createBody(body), (payload) => api.hooks.create({ payload, headers: {} })),
  update: (api, id, body) =>
    Effect.flatMap(
      Effect.all([ids.hook(id), patchBody(body)]),
      ([id, payload]) => api.hooks.update({ params: { id }, payload })
    ),
  remove: (api, id) => Effect.flatMap(ids.hook(id), (id) => api.hooks.delete({ params: { id } }))
})

const rotate = itemChange({
  name: "rotate-secret",
  singular: "hook",
  description: "Replace the hook's signing secret: rotate-secret <id> --stdin secret < secret.txt",
  run: (api, id, body) =>
    Effect.flatMap(
      Effect.all([ids.hook(id), rotateBody(body)]),
      ([id, payload]) => api.hooks.rotateSecret({ params: { id }, payload, headers: {} })
    ),
  line: hookLine
})

const test = itemAction({
  name: "test",
  singular: "hook",
  description: "Deliver a signed test request to the hook; prints its decision",
  run: (api, id) => Effect.flatMap(ids.hook(id), (id) => api.hooks.test({ params: { id }, headers: {} })),
  line: (r) => `delivered in ${r.latencyMs} ms: ${r.decision}${r.reason === undefined ? "" : ` (${r.reason})`}`
})

export const hooks = Command.make("hooks").pipe(
  Command.withDescription("Tool approval hooks: list, get, create, update, delete, rotate-secret, test"),
  Command.withSubcommands([
    commands.list,
    commands.get,
    commands.create,
    commands.update,
    commands.delete,
    rotate,
    test
  ])
)

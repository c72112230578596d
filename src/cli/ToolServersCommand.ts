/**
 * `tool-servers list|get|create|update|delete|test`: the workspace's MCP
 * servers (`/v1/tool-servers`). Bodies are the API's, from `--file` / `--data`.
 */
import { checked, ids } from "agent-service/client"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { type ToolServer, ToolServerCreate, ToolServerPatch } from "../../domain/ToolServer.ts"
import { itemAction, resourceCommands, testLine } from "./ResourceCommands.ts"

const createBody = checked(ToolServerCreate, "tool server")
const patchBody = checked(ToolServerPatch, "tool server change")

/** `id  name  transport  url  approval`. */
const serverLine = (s: ToolServer) => [s.id, s.name, s.transport, s.url, `approval ${s.approval ?? "none"}`].join("  ")

const commands = resourceCommands<ToolServer>({
  command: "tool-servers",
  singular: "tool server",
  plural: "tool servers",
  line: serverLine,
  list: (api, query) => api.toolServers.list({ query }),
  get: (api, id) => Effect.flatMap(ids.toolServer(id), (id) => api.toolServers.get({ params: { id } })),
  create: (api, body) =>
    Effect.flatMap(createBody(body), (payload) => api.toolServers.create({ payload, headers: {} })),
  update: (api, id, body) =>
    Effect.flatMap(
      Effect.all([ids.toolServer(id), patchBody(body)]),
      ([id, payload]) => api.toolServers.update({ params: { id }, payload })
    ),
  remove: (api, id) => Effect.flatMap(ids.toolServer(id), (id) => api.toolServers.delete({ params: { id } }))
})

const test = itemAction({
  name: "test",
  singular: "tool server",
  description: "Connect to the server and list the tools the model would get",
  run: (api, id) => Effect.flatMap(ids.toolServer(id), (id) => api.toolServers.test({ params: { id }, headers: {} })),
  line: testLine
})

export const toolServers = Command.make("tool-servers").pipe(
  Command.withDescription("MCP tool servers: list, get, create, update, delete, test"),
  Command.withSubcommands([commands.list, commands.get, commands.create, commands.update, commands.delete, test])
)

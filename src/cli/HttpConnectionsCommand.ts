/**
 * `http-connections list|get|create|update|delete|test`: the workspace's
 * OpenAPI connections (`/v1/http-connections`). Bodies are the API's, from `--file` / `--data`.
 */
import { checked, ids } from "agent-service/client"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { type HttpConnection, HttpConnectionCreate, HttpConnectionPatch } from "../../domain/HttpConnection.ts"
import { itemAction, resourceCommands, testLine } from "./ResourceCommands.ts"

const createBody = checked(HttpConnectionCreate, "HTTP connection")
const patchBody = checked(HttpConnectionPatch, "HTTP connection change")

/** `id  name  baseUrl  approval`. */
const connectionLine = (c: HttpConnection) =>
  [c.id, c.name, c.baseUrl ?? "(the spec's server)", `approval ${c.approval ?? "none"}`].join("  ")

const commands = resourceCommands<HttpConnection>({
  command: "http-connections",
  singular: "HTTP connection",
  plural: "HTTP connections",
  line: connectionLine,
  list: (api, query) => api.httpConnections.list({ query }),
  get: (api, id) => Effect.flatMap(ids.httpConnection(id), (id) => api.httpConnections.get({ params: { id } })),
  create: (api, body) =>
    Effect.flatMap(createBody(body), (payload) => api.httpConnections.create({ payload, headers: {} })),
  update: (api, id, body) =>
    Effect.flatMap(
      Effect.all([ids.httpConnection(id), patchBody(body)]),
      ([id, payload]) => api.httpConnections.update({ params: { id }, payload })
    ),
  remove: (api, id) => Effect.flatMap(ids.httpConnection(id), (id) => api.httpConnections.delete({ params: { id } }))
})

const test = itemAction({
  name: "test",
  singular: "HTTP connection",
  description: "Read the connection's spec and list the operations the model would get as tools",
  run: (api, id) =>
    Effect.flatMap(ids.httpConnection(id), (id) => api.httpConnections.test({ params: { id }, headers: {} })),
  line: testLine
})

export const httpConnections = Command.make("http-connections").pipe(
  Command.withDescription("HTTP (OpenAPI) connections: list, get, create, update, delete, test"),
  Command.withSubcommands([commands.list, commands.get, commands.create, commands.update, commands.delete, test])
)

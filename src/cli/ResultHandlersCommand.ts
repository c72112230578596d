/**
 * `result-handlers list|get|create|update|delete|rotate-secret`: where
 * agents export artifacts (`/v1/result-handlers`). The signing secret is
 * write-only; read it from stdin with `--stdin secret`.
 */
import { checked, ids } from "agent-service/client"
import { Effect, Schema } from "effect"
import { Command } from "effect/cli"
import { type ResultHandler, ResultHandlerCreate, ResultHandlerPatch } from "../../domain/ResultHandler.ts"
import { itemChange, resourceCommands } from "./ResourceCommands.ts"

const createBody = checked(ResultHandlerCreate, "result handler")
const patchBody = checked(ResultHandlerPatch, "result handler change")
// The route's body (the service says which secrets it takes: 400 result_handler_secret_missing, ...).
const rotateBody = checked(Schema.Struct({ secret: Schema.optionalKey(Schema.Unknown) }), "signing secret")

/** `id  name  kind  url`. */
const handlerLine = (h: ResultHandler) => [h.id, h.name, h.kind, h.url].join("  ")

const commands = resourceCommands<ResultHandler>({
  command: "result-handlers",
  singular: "result handler",
  plural: "result handlers",
  line: handlerLine,
  list: (api, query) => api.resultHandlers.list({ query }),
  get: (api, id) => Effect.flatMap(ids.resultHandler(id), (id) => api.resultHandlers.get({ params: { id } })),
  create: (api, body) =>
    Effect.flatMap(createBody(body), (payload) => api.resultHandlers.create({ payload, headers: {} })),
  update: (api, id, body) =>
    Effect.flatMap(
      Effect.all([ids.resultHandler(id), patchBody(body)]),
      ([id, payload]) => api.resultHandlers.update({ params: { id }, payload })
    ),
  remove: (api, id) => Effect.flatMap(ids.resultHandler(id), (id) => api.resultHandlers.delete({ params: { id } }))
})

const rotate = itemChange({
  name: "rotate-secret",
  singular: "result handler",
  description: "Replace the handler's signing secret: rotate-secret <id> --stdin secret < secret.txt",
  run: (api, id, body) =>
    Effect.flatMap(
      Effect.all([ids.resultHandler(id), rotateBody(body)]),
      ([id, payload]) => api.resultHandlers.rotateSecret({ params: { id }, payload, headers: {} })
    ),
  line: handlerLine
})

export const resultHandlers = Command.make("result-handlers").pipe(
  Command.withDescription("Result handlers (artifact exports): list, get, create, update, delete, rotate-secret"),
  Command.withSubcommands([commands.list, commands.get, commands.create, commands.update, commands.delete, rotate])
)

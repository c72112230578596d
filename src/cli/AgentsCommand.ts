/**
 * `agents list|get|create|update|delete`, through the typed client. A body
 * comes from `--file` / `--data` (the API's fields), with `--context`,
 * `--band` and `--metadata` over it.
 */
import { checked, ids } from "agent-service/client"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { type Agent, AgentCreate, AgentPatch } from "../../domain/Agent.ts"
import { asObject, type Body, bodyFlags, bodyOf, field, json, printed } from "./Flags.ts"
import { type Api, resourceCommands, withApi } from "./ResourceCommands.ts"

/** The first line of the agent's first context block, cut to 60 characters. */
const summary = (agent: Agent) => {
  const line = (agent.context[0]?.content ?? "").split("\n")[0]
  return line.length > 60 ? `${line.slice(0, 60)}...` : line
}

const agentLine = (agent: Agent) => [agent.id, agent.band, agent.createdAt, summary(agent)].join("  ").trimEnd()

const createBody = checked(AgentCreate, "agent")
const patchBody = checked(AgentPatch, "agent change")

const createAgent = (api: Api, body: Body) =>
  Effect.flatMap(createBody(body), (payload) => api.agents.create({ payload, headers: {} }))
const updateAgent = (api: Api, id: string, body: Body) =>
  Effect.flatMap(
    Effect.all([ids.agent(id), patchBody(body)]),
    ([id, payload]) => api.agents.update({ params: { id }, payload })
  )

const commands = resourceCommands<Agent>({
  command: "agents",
  singular: "agent",
  plural: "agents",
  line: agentLine,
  list: (api, query) => api.agents.list({ query }),
  get: (api, id) => Effect.flatMap(ids.agent(id), (id) => api.agents.get({ params: { id } })),
  create: createAgent,
  update: updateAgent,
  remove: (api, id) => Effect.flatMap(ids.agent(id), (id) => api.agents.delete({ params: { id } }))
})

const settingFlags = {
  context: Flag.String("context").pipe(Flag.optional, Flag.withDescription("The agent's context (instructions)")),
  band: Flag.String("band").pipe(Flag.optional, Flag.withDescription("lite, core or frontier")),
  metadata: Flag.KeyValuePair("metadata").pipe(Flag.optional, Flag.withDescription("key=value, repeatable"))
}

/** The body of `--file` / `--data` with the setting flags over it (metadata merged key by key). */
const withSettings = (flags: {
  readonly file: Option.Option<unknown>
  readonly data: Option.Option<string>
  readonly stdin: Option.Option<string>
  readonly context: Option.Option<string>
  readonly band: Option.Option<string>
  readonly metadata: Option.Option<Record<string, string>>
}) =>
  Effect.map(bodyOf(flags), (body): Body => ({
    ...body,
    ...field("context", flags.context),
    ...field("band", flags.band),
    ...field(
      "metadata",
      Option.map(flags.metadata, (m) => ({ ...Option.getOrElse(asObject(body["metadata"]), () => ({})), ...m }))
    )
  }))

const create = Command.make("create", { ...bodyFlags, ...settingFlags, json }, (flags) =>
  Effect.gen(function*() {
    const body = yield* withSettings(flags)
    const agent = yield* withApi((api) => createAgent(api, body))
    yield* printed(flags.json, agent, (a) => a.id)
  })).pipe(Command.withDescription("Create an agent from --file / --data and the flags; prints its id"))

const update = Command.make(
  "update",
  { id: Argument.String("id"), ...bodyFlags, ...settingFlags, json },
  (flags) =>
    Effect.gen(function*() {
      const body = yield* withSettings(flags)
      const agent = yield* withApi((api) => updateAgent(api, flags.id, body))
      yield* printed(flags.json, agent, agentLine)
    })
).pipe(Command.withDescription("Change an agent: the fields of --file / --data and the flags (PATCH)"))

export const agents = Command.make("agents").pipe(
  Command.withDescription("Agents: list, get, create, update, delete"),
  Command.withSubcommands([commands.list, commands.get, create, update, commands.delete])
)

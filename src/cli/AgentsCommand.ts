/**
 * `agents list` (newest first, one line each, or the page as JSON) and
 * `agents create` (a body from `--file`, with flags over it), through the typed client.
 */
import { checked, normalized } from "agent-service/client"
import { Effect, Option, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { type Agent, AgentCreate } from "../../domain/Agent.ts"
import { Usage } from "./CommandFailure.ts"
import { client } from "./Connection.ts"
import { Output } from "./Output.ts"
import { json, listCommand } from "./PagedList.ts"

/** The first line of the agent's first context block, cut to 60 characters. */
const summary = (agent: Agent) => {
  const line = (agent.context[0]?.content ?? "").split("\n")[0]
  return line.length > 60 ? `${line.slice(0, 60)}...` : line
}

const agentLine = (agent: Agent) => [agent.id, agent.band, agent.createdAt, summary(agent)].join("  ").trimEnd()

const list = listCommand({
  plural: "agents",
  command: "agents list",
  description: "List agents, newest first",
  fetch: (api, query) => api.agents.list({ query }),
  line: agentLine
})

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
const decodeObject = Schema.decodeUnknownOption(JsonObject)
const agentBody = checked(AgentCreate, "agent")

const create = Command.make("create", {
  file: Flag.FileParse("file", { format: "json" }).pipe(
    Flag.optional,
    Flag.withDescription("A JSON file with the agent's body (POST /v1/agents)")
  ),
  context: Flag.String("context").pipe(Flag.optional, Flag.withDescription("The agent's context (instructions)")),
  band: Flag.String("band").pipe(Flag.optional, Flag.withDescription("lite, core or frontier")),
  metadata: Flag.KeyValuePair("metadata").pipe(Flag.optional, Flag.withDescription("key=value, repeatable")),
  json
}, (flags) =>
  Effect.gen(function*() {
    const api = yield* client
    const out = yield* Output
    const file: Option.Option<Record<string, unknown>> = Option.isSome(flags.file)
      ? decodeObject(flags.file.value)
      : Option.some({})
    if (Option.isNone(file)) return yield* new Usage({ message: "--file must hold a JSON object (the agent's body)" })
    const fileMetadata = decodeObject(file.value["metadata"])
    const body = {
      ...file.value,
      ...Option.match(flags.context, { onNone: () => ({}), onSome: (context) => ({ context }) }),
      ...Option.match(flags.band, { onNone: () => ({}), onSome: (band) => ({ band }) }),
      ...Option.match(flags.metadata, {
        onNone: () => ({}),
        onSome: (metadata) => ({ metadata: { ...Option.getOrElse(fileMetadata, () => ({})), ...metadata } })
      })
    }
    const payload = yield* agentBody(body)
    const agent = yield* normalized(api.agents.create({ payload, headers: {} }))
    yield* out.line(flags.json ? JSON.stringify(agent, null, 2) : agent.id)
  })).pipe(Command.withDescription("Create an agent from --file and/or flags; prints its id"))

export const agents = Command.make("agents").pipe(
  Command.withDescription("List and create agents"),
  Command.withSubcommands([list, create])
)

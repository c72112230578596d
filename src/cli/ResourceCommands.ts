/**
 * The commands of a resource the API manages as a collection (tool servers,
 * HTTP connections, secrets, hooks, result handlers, ...), written once:
 * `list`, `get <id>`, `create` (body from `--file` / `--data`), `update <id>`
 * (the PATCH body, the same way) and `delete <id>`, each with `--json`.
 * A family module says how to reach each route and how an item reads on one
 * line, and picks the commands it offers.
 */
import { normalized } from "agent-service/client"
import { Effect } from "effect"
import { Argument, Command } from "effect/cli"
import { client } from "./Connection.ts"
import { type Body, bodyFlags, bodyOf, json, printed } from "./Flags.ts"
import { listCommand } from "./PagedList.ts"

export type Api = Effect.Success<typeof client>
type Query = Parameters<Parameters<typeof listCommand>[0]["fetch"]>[1]

export interface Resource<A> {
  /** The command group: `tool-servers`. */
  readonly command: string
  /** `tool server`, `tool servers`. */
  readonly singular: string
  readonly plural: string
  readonly line: (item: A) => string
  readonly list: (
    api: Api,
    query: Query
  ) => Effect.Effect<{ readonly data: ReadonlyArray<A>; readonly nextCursor: string | null }, unknown>
  readonly get: (api: Api, id: string) => Effect.Effect<A, unknown>
  readonly create: (api: Api, body: Body) => Effect.Effect<A, unknown>
  readonly update: (api: Api, id: string, body: Body) => Effect.Effect<A, unknown>
  readonly remove: (api: Api, id: string) => Effect.Effect<{ readonly id: string }, unknown>
}

export const idArgument = (singular: string) =>
  Argument.String("id").pipe(Argument.withDescription(`The ${singular}'s id`))

/** Runs `f` with the client; its failures normalized. */
export const withApi = <A>(f: (api: Api) => Effect.Effect<A, unknown>) =>
  Effect.flatMap(client, (api) => normalized(f(api)))

export const resourceCommands = <A extends { readonly id: string }>(r: Resource<A>) => ({
  list: listCommand({
    plural: r.plural,
    command: `${r.command} list`,
    description: `List ${r.plural}, newest first`,
    fetch: r.list,
    line: r.line
  }),
  get: Command.make(
    "get",
    { id: idArgument(r.singular), json },
    (flags) => Effect.flatMap(withApi((api) => r.get(api, flags.id)), (item) => printed(flags.json, item, r.line))
  ).pipe(Command.withDescription(`Show a ${r.singular}`)),
  create: Command.make("create", { ...bodyFlags, json }, (flags) =>
    Effect.gen(function*() {
      const body = yield* bodyOf(flags)
      const item = yield* withApi((api) => r.create(api, body))
      yield* printed(flags.json, item, (i) => i.id)
    })).pipe(Command.withDescription(`Create a ${r.singular} from --file and/or --data; prints its id`)),
  update: Command.make("update", { id: idArgument(r.singular), ...bodyFlags, json }, (flags) =>
    Effect.gen(function*() {
      const body = yield* bodyOf(flags)
      const item = yield* withApi((api) => r.update(api, flags.id, body))
      yield* printed(flags.json, item, r.line)
    })).pipe(Command.withDescription(`Change a ${r.singular}: the fields of --file and/or --data (PATCH)`)),
  delete: Command.make("delete", { id: idArgument(r.singular), json }, (flags) =>
    Effect.gen(function*() {
      const deleted = yield* withApi((api) => r.remove(api, flags.id))
      yield* printed(flags.json, deleted, (d) => `${d.id} deleted`)
    })).pipe(Command.withDescription(`Delete a ${r.singular}`))
})

/** A command on one item without a body, `<name> <id>`: `test`. */
export const itemAction = <B>(options: {
  readonly name: string
  readonly singular: string
  readonly description: string
  readonly run: (api: Api, id: string) => Effect.Effect<B, unknown>
  readonly line: (result: B) => string
}) =>
  Command.make(
    options.name,
    { id: idArgument(options.singular), json },
    (flags) =>
      Effect.flatMap(
        withApi((api) => options.run(api, flags.id)),
        (result) => printed(flags.json, result, options.line)
      )
  ).pipe(Command.withDescription(options.description))

/** What a connection test answers: `connected in <ms> ms: <n> tools: a, b`. */
export const testLine = (result: {
  readonly latencyMs: number
  readonly tools: ReadonlyArray<{ readonly name: string }>
}) =>
  `connected in ${result.latencyMs} ms: ${result.tools.length} tool${result.tools.length === 1 ? "" : "s"}${
    result.tools.length === 0 ? "" : `: ${result.tools.map((t) => t.name).join(", ")}`
  }`

/** A command on one item with a body, `<name> <id> --file|--data|--stdin`: `rotate`. */
export const itemChange = <B>(options: {
  readonly name: string
  readonly singular: string
  readonly description: string
  readonly run: (api: Api, id: string, body: Body) => Effect.Effect<B, unknown>
  readonly line: (result: B) => string
}) =>
  Command.make(
    options.name,
    { id: idArgument(options.singular), ...bodyFlags, json },
    (flags) =>
      Effect.gen(function*() {
        const body = yield* bodyOf(flags)
        const result = yield* withApi((api) => options.run(api, flags.id, body))
        yield* printed(flags.json, result, options.line)
      })
  ).pipe(Command.withDescription(options.description))

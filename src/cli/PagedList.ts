/**
 * The CLI's `<resource> list` commands, written once: `--limit`, `--cursor`
 * and `--json` flags, one line per item (or the page as JSON), `no <plural>`
 * for an empty page and the command for the next page when there is one.
 */
import { normalized, pageQuery } from "agent-service/client"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { client } from "./Connection.ts"
import { Output } from "./Output.ts"

export const json = Flag.Boolean("json").pipe(Flag.withDefault(false), Flag.withDescription("Print the answer as JSON"))

type Api = Effect.Success<typeof client>
type Query = Effect.Success<ReturnType<typeof pageQuery>>

export const listCommand = <A, E>(options: {
  /** What a page holds: `agents`, `keys`. */
  readonly plural: string
  /** The command that lists them, for the next page's hint: `agents list`. */
  readonly command: string
  readonly description: string
  readonly fetch: (
    api: Api,
    query: Query
  ) => Effect.Effect<{ readonly data: ReadonlyArray<A>; readonly nextCursor: string | null }, E>
  readonly line: (item: A) => string
}) =>
  Command.make("list", {
    limit: Flag.Int("limit").pipe(
      Flag.optional,
      Flag.withDescription(`${options.plural[0].toUpperCase()}${options.plural.slice(1)} per page (1-100, default 20)`)
    ),
    cursor: Flag.String("cursor").pipe(Flag.optional, Flag.withDescription("The page after this cursor")),
    json
  }, (flags) =>
    Effect.gen(function*() {
      const api = yield* client
      const out = yield* Output
      const query = yield* pageQuery({
        limit: Option.getOrUndefined(flags.limit),
        cursor: Option.getOrUndefined(flags.cursor)
      })
      const page = yield* normalized(options.fetch(api, query))
      if (flags.json) return yield* out.line(JSON.stringify(page, null, 2))
      if (page.data.length === 0) return yield* out.line(`no ${options.plural}`)
      yield* Effect.forEach(page.data, (item) => out.line(options.line(item)))
      if (page.nextCursor !== null) yield* out.line(`more: ${options.command} --cursor ${page.nextCursor}`)
    })).pipe(Command.withDescription(options.description))

/**
 * The CLI's `<resource> list` commands without filters, written once:
 * `--limit`, `--cursor` and `--json`, one line per item (or the page as
 * JSON), `no <plural>` for an empty page and the command for the next page.
 */
import { normalized } from "agent-service/client"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { client } from "./Connection.ts"
import { json, pageFlags, pageOf, printPage } from "./Flags.ts"

type Api = Effect.Success<typeof client>
type Query = Effect.Success<ReturnType<typeof pageOf>>

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
  Command.make("list", { ...pageFlags, json }, (flags) =>
    Effect.gen(function*() {
      const api = yield* client
      const page = yield* normalized(options.fetch(api, yield* pageOf(flags)))
      yield* printPage(flags.json, page, options)
    })).pipe(Command.withDescription(options.description))

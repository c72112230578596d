/**
 * Flags and printing every command shares: `--json`, a page's `--limit` and
 * `--cursor`, a request body from `--file <path>` and/or `--data <json>`
 * (the route's JSON body, flags of the command over it), and how a result
 * is printed (one line, or the API's JSON as it came).
 */
import { pageQuery } from "agent-service/client"
import { Effect, Option, Schema } from "effect"
import { Flag } from "effect/cli"
import { text } from "node:stream/consumers"
import { Usage } from "./CommandFailure.ts"
import { Invocation } from "./Invocation.ts"
import { Output } from "./Output.ts"

export const json = Flag.Boolean("json").pipe(Flag.withDefault(false), Flag.withDescription("Print the answer as JSON"))

/** `--limit` and `--cursor` of a list. */
export const pageFlags = {
  limit: Flag.Int("limit").pipe(Flag.optional, Flag.withDescription("Items per page (1-100, default 20)")),
  cursor: Flag.String("cursor").pipe(Flag.optional, Flag.withDescription("The page after this cursor"))
}

/** The `limit` and `cursor` query of `pageFlags`, checked. */
export const pageOf = (flags: { readonly limit: Option.Option<number>; readonly cursor: Option.Option<string> }) =>
  pageQuery({ limit: Option.getOrUndefined(flags.limit), cursor: Option.getOrUndefined(flags.cursor) })

/** `--file`, `--data` and `--stdin`: the request body. */
export const bodyFlags = {
  file: Flag.FileParse("file", { format: "json" }).pipe(
    Flag.optional,
    Flag.withDescription("A JSON file with the request body (the API's fields)")
  ),
  data: Flag.String("data").pipe(Flag.optional, Flag.withDescription("The request body as inline JSON")),
  stdin: Flag.String("stdin").pipe(
    Flag.optional,
    Flag.withDescription("Read this body field from stdin (a secret's value: --stdin value < token.txt)")
  )
}

/** Standard input as text, one final line break dropped. */
const stdinText = Effect.flatMap(Invocation, ({ stdin }) =>
  Effect.tryPromise({
    try: () => text(stdin),
    catch: (cause) => new Usage({ message: `could not read stdin: ${String(cause)}` })
  })).pipe(Effect.map((t) => t.replace(/\r?\n$/, "")))

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
const decodeObject = Schema.decodeUnknownOption(JsonObject)
const decodeJsonObject = Schema.decodeUnknownOption(Schema.fromJsonString(JsonObject))

export type Body = Record<string, unknown>

/** A JSON object's value, if `value` is one. */
export const asObject = (value: unknown): Option.Option<Body> => decodeObject(value)

/** The body of `--file` with `--data` over it (`{}` without either), and the field `--stdin` names. */
export const bodyOf = (flags: {
  readonly file: Option.Option<unknown>
  readonly data: Option.Option<string>
  readonly stdin: Option.Option<string>
}) =>
  Effect.gen(function*() {
    const file: Option.Option<Body> = Option.isSome(flags.file) ? decodeObject(flags.file.value) : Option.some({})
    if (Option.isNone(file)) return yield* new Usage({ message: "--file must hold a JSON object (the request body)" })
    const data: Option.Option<Body> = Option.isSome(flags.data) ? decodeJsonObject(flags.data.value) : Option.some({})
    if (Option.isNone(data)) return yield* new Usage({ message: "--data must be a JSON object (the request body)" })
    const fromStdin = Option.isSome(flags.stdin) ? { [flags.stdin.value]: yield* stdinText } : {}
    const body: Body = { ...file.value, ...data.value, ...fromStdin }
    return body
  })

/** `{ [key]: value }` when the flag is set, else `{}`: flags spread over a body. */
export const field = <A>(key: string, flag: Option.Option<A>): Body =>
  Option.match(flag, { onNone: () => ({}), onSome: (value) => ({ [key]: value }) })

/** Prints `value` as JSON, or its line. */
export const printed = <A>(asJson: boolean, value: A, line: (value: A) => string) =>
  Effect.flatMap(Output, (out) => out.line(asJson ? JSON.stringify(value, null, 2) : line(value)))

/** A page of a list: one line per item (or the page as JSON), `no <plural>`, then the next page's command. */
export const printPage = <A>(
  asJson: boolean,
  page: { readonly data: ReadonlyArray<A>; readonly nextCursor: string | null },
  options: { readonly plural: string; readonly command: string; readonly line: (item: A) => string }
) =>
  Effect.gen(function*() {
    const out = yield* Output
    const cliName = (yield* Invocation).name
    if (asJson) return yield* out.line(JSON.stringify(page, null, 2))
    if (page.data.length === 0) return yield* out.line(`no ${options.plural}`)
    yield* Effect.forEach(page.data, (item) => out.line(options.line(item)))
    if (page.nextCursor !== null) yield* out.line(`more: ${cliName} ${options.command} --cursor ${page.nextCursor}`)
  })

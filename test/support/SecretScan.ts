/**
 * The secret-leak scanner (issue 15): every form a secret value can take in
 * text (as is, JSON-escaped, percent-encoded as a URL component and as a form
 * field, base64 and base64url at each byte alignment, hex), looked for in
 * named texts; and every column of every table of a database as text (bytea
 * both as escaped bytes and as hex), so nothing stored is left unread.
 */
import { Effect } from "effect"
import { query } from "./TestDatabase.ts"

export interface Source {
  /** Where the text comes from (a response, a stream, the log, a column). */
  readonly where: string
  readonly text: string
}

export interface Hit {
  readonly where: string
  readonly secret: string
  readonly form: string
  /** The text around the hit. */
  readonly excerpt: string
}

/** The base64 runs that encode `bytes` wherever it starts in an encoded stream (edges that mix in other bytes dropped). */
const base64Cores = (bytes: Buffer, alphabet: "base64" | "base64url"): ReadonlyArray<string> =>
  [0, 1, 2].map((shift) => {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString(alphabet).replace(/=+$/, "")
    const head = shift === 0 ? 0 : shift + 1
    const tail = (shift + bytes.length) % 3 === 0 ? 0 : 1
    return encoded.slice(head, encoded.length - tail)
  })

/** Each form of `value` a leak could take, by name. */
export const formsOf = (value: string): ReadonlyArray<{ readonly form: string; readonly text: string }> => {
  const bytes = Buffer.from(value, "utf8")
  const forms = [
    { form: "plain", text: value },
    { form: "json", text: JSON.stringify(value).slice(1, -1) },
    { form: "url-component", text: encodeURIComponent(value) },
    { form: "form-field", text: new URLSearchParams({ v: value }).toString().slice(2) },
    { form: "hex", text: bytes.toString("hex") },
    ...base64Cores(bytes, "base64").map((text, shift) => ({ form: `base64+${shift}`, text })),
    ...base64Cores(bytes, "base64url").map((text, shift) => ({ form: `base64url+${shift}`, text }))
  ]
  // A form shorter than this would match by chance.
  return forms.filter((f, i) => f.text.length >= 12 && forms.findIndex((g) => g.text === f.text) === i)
}

/** Every occurrence of every form of every secret in `sources` (case-sensitive; hex also upper-case). */
export const scan = (secrets: Readonly<Record<string, string>>, sources: Iterable<Source>): ReadonlyArray<Hit> => {
  const patterns = Object.entries(secrets).flatMap(([secret, value]) =>
    formsOf(value).flatMap((f) =>
      (f.form === "hex" ? [f, { form: "HEX", text: f.text.toUpperCase() }] : [f]).map((p) => ({ secret, ...p }))
    )
  )
  const hits: Array<Hit> = []
  for (const source of sources) {
    for (const p of patterns) {
      const at = source.text.indexOf(p.text)
      if (at !== -1) {
        hits.push({
          where: source.where,
          secret: p.secret,
          form: p.form,
          excerpt: source.text.slice(Math.max(0, at - 120), at + p.text.length + 60)
        })
      }
    }
  }
  return hits
}

const quoted = (name: string) => `"${name.replace(/"/g, "\"\"")}"`

/** Every row of every table in the database at `url` (every schema but the system ones), one source per row and column. */
export const databaseSources = (url: string): Effect.Effect<ReadonlyArray<Source>> =>
  Effect.gen(function*() {
    const columns = yield* query(
      url,
      `SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns
       WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'pg_toast%'
       ORDER BY table_schema, table_name, ordinal_position`
    )
    const tables = new Map<string, Array<{ readonly column: string; readonly type: string }>>()
    for (const row of columns) {
      const table = `${quoted(String(row["table_schema"]))}.${quoted(String(row["table_name"]))}`
      tables.set(table, [...(tables.get(table) ?? []), {
        column: String(row["column_name"]),
        type: String(row["data_type"])
      }])
    }
    const sources: Array<Source> = []
    for (const [table, cols] of tables) {
      const exprs = cols.flatMap(({ column, type }) =>
        type === "bytea"
          ? [
            `encode(${quoted(column)}, 'escape') AS ${quoted(`${column}:escape`)}`,
            `encode(${quoted(column)}, 'hex') AS ${quoted(`${column}:hex`)}`
          ]
          : [`${quoted(column)}::text AS ${quoted(column)}`]
      )
      const rows = yield* query(url, `SELECT ${exprs.join(", ")} FROM ${table}`)
      for (const [index, row] of rows.entries()) {
        for (const [column, value] of Object.entries(row)) {
          if (typeof value === "string") sources.push({ where: `${table}.${column} row ${index}`, text: value })
        }
      }
    }
    return sources
  })

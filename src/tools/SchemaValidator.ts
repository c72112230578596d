/**
 * JSON Schema checks and validation for schemas tenants bring, as the
 * validation worker runs them (SchemaWorker.ts): Ajv, with every `pattern` and
 * `patternProperties` regular expression compiled by RE2JS, a linear-time
 * engine, so no pattern can backtrack. A pattern RE2 cannot run (a
 * backreference, a lookahead or lookbehind) fails the schema's check. Each
 * schema gets an Ajv instance of its own, so a `$id` of one tenant's schema is
 * never seen by another's. Compiled validators are kept per schema text.
 */
import { Ajv, type ValidateFunction } from "ajv"
import { RE2JS } from "re2js"

const options = { allErrors: true, strict: false } as const

/** JavaScript pattern syntax read by RE2 (`\u00e9`, `[^]`, named groups), compiled once per pattern. */
const re2 = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern))
    return { test: (text: string) => compiled.test(text) }
  },
  { code: "re2js" }
)

/** Meta-schema checks only: no tenant schema is ever added to this instance. */
const meta = new Ajv(options)

const MaxMessageChars = 1_000
const MaxCached = 32

const cut = (text: string) => (text.length > MaxMessageChars ? `${text.slice(0, MaxMessageChars)}…` : text)

const messageOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

type Compiled =
  | { readonly _tag: "Ok"; readonly ajv: Ajv; readonly validate: ValidateFunction }
  | { readonly _tag: "Refused"; readonly problem: string }

const cache = new Map<string, Compiled>()

const compileNew = (schema: Readonly<Record<string, unknown>>): Compiled => {
  if (meta.validateSchema(schema) !== true) {
    return {
      _tag: "Refused",
      problem: `is not a valid JSON Schema: ${cut(meta.errorsText(meta.errors, { dataVar: "schema" }))}`
    }
  }
  const ajv = new Ajv({ ...options, validateSchema: false, code: { regExp: re2 } })
  let validate: ValidateFunction
  try {
    validate = ajv.compile(schema)
  } catch (cause) {
    const message = messageOf(cause)
    return {
      _tag: "Refused",
      problem: message.startsWith("error parsing regexp")
        ? `has a pattern the linear-time engine cannot run (RE2: no backreferences, lookahead or lookbehind): ${
          cut(message)
        }`
        : `cannot be compiled: ${cut(message)}`
    }
  }
  // An $async schema's validator answers a promise: nothing the service waits for.
  if ((validate as { readonly $async?: boolean }).$async === true) {
    return { _tag: "Refused", problem: "is an $async schema, which is not supported" }
  }
  return { _tag: "Ok", ajv, validate }
}

const compile = (schema: Readonly<Record<string, unknown>>): Compiled => {
  const key = JSON.stringify(schema)
  const hit = cache.get(key)
  if (hit !== undefined) {
    cache.delete(key)
    cache.set(key, hit)
    return hit
  }
  const compiled = compileNew(schema)
  cache.set(key, compiled)
  if (cache.size > MaxCached) cache.delete(cache.keys().next().value ?? key)
  return compiled
}

/**
 * Why the schema cannot be used, as a predicate of it ("is not a valid JSON Schema: ...", "has a
 * pattern ...", "cannot be compiled: ..." for a reference it cannot resolve), if it cannot.
 */
export const check = (schema: Readonly<Record<string, unknown>>): string | undefined => {
  const compiled = compile(schema)
  return compiled._tag === "Refused" ? compiled.problem : undefined
}

export type Validation =
  | { readonly _tag: "Valid" }
  | { readonly _tag: "Invalid"; readonly message: string }
  | { readonly _tag: "Refused"; readonly problem: string }

/** `value` against `schema`: valid, or the errors as one line. */
export const validate = (schema: Readonly<Record<string, unknown>>, value: unknown): Validation => {
  const compiled = compile(schema)
  if (compiled._tag === "Refused") return compiled
  const { ajv, validate } = compiled
  return validate(value) === true
    ? { _tag: "Valid" }
    : { _tag: "Invalid", message: cut(ajv.errorsText(validate.errors)) }
}

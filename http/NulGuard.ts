/**
 * Requests carrying U+0000. PostgreSQL text and jsonb cannot hold it, so a NUL
 * in a query parameter (name or value) or in any string of a JSON body (a
 * value or a key, at any depth) is found here, before the body is decoded and
 * long before any SQL, and the API middleware refuses it with 400 naming where
 * it was. Path ids never get this far: a NUL cannot match an id's shape
 * (domain/Ids.ts), so they answer 404.
 */
import { Effect, Option, Schema } from "effect"
import { HttpServerRequest } from "effect/http"

export interface NulFound {
  /** `metadata.team`, `context[0].content`, a query parameter's name; `body` for a bare string body. */
  readonly field: string
  readonly location: "query" | "body"
}

const NUL = "\u0000"

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

const at = (path: string, key: string) => (path === "" ? key : `${path}.${key}`)

/** The path of the first string or key holding a NUL, in the style of decoding errors' fields. */
export const nulPath = (value: unknown, path = ""): string | undefined => {
  if (typeof value === "string") return value.includes(NUL) ? (path === "" ? "body" : path) : undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], `${path}[${i}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes(NUL)) return at(path, key)
      const found = nulPath(item, at(path, key))
      if (found !== undefined) return found
    }
  }
  return undefined
}

/** Where the current request carries a NUL, if it does. */
export const findNul: Effect.Effect<Option.Option<NulFound>, never, HttpServerRequest.HttpServerRequest> = Effect.gen(
  function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    for (const [name, value] of new URL(request.url, "http://localhost").searchParams) {
      if (name.includes(NUL) || value.includes(NUL)) return Option.some({ field: name, location: "query" as const })
    }
    if (!(request.headers["content-type"] ?? "").includes("json")) return Option.none()
    // The body is read once and cached: the payload decoder reads the same bytes (and
    // answers a body that cannot be read or parsed itself, so failures are left to it).
    const text = yield* Effect.option(request.text)
    // In JSON text a NUL can only be written as the escape \u0000: most bodies skip the walk.
    if (Option.isNone(text) || !text.value.includes("\\u0000")) return Option.none()
    return Option.flatMap(
      decodeJson(text.value),
      (json) => Option.map(Option.fromUndefinedOr(nulPath(json)), (field) => ({ field, location: "body" as const }))
    )
  }
)

/**
 * JSON request bodies nested deeper than MaxBodyDepth levels are refused with
 * 400 naming the top-level field that holds the nesting, before anything
 * decodes or walks them: a recursive walk of a body 10,000 levels deep (a
 * validator, a serializer, a canonical form) would exhaust the stack. The text
 * is scanned once, without recursion; no legitimate body comes near the limit
 * (a schema's own bound, SchemaLimits.maxDepth, is half of it).
 */
import { Effect, Option, Schema } from "effect"
import { HttpServerRequest } from "effect/http"
import { MaxBodyDepth } from "../src/tools/SchemaBudget.ts"

export { MaxBodyDepth }

const decodeKey = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.String))

const quote = 0x22
const backslash = 0x5c

/**
 * Where JSON `text` nests deeper than `limit`: the top-level field of the object it is in
 * (`outputSchema`), or `body` when the nesting is not under a field; undefined when it does not.
 * Malformed text is scanned as far as it goes (its decoding answers it).
 */
export const tooDeepField = (text: string, limit: number): string | undefined => {
  let depth = 0
  let rootIsObject = false
  let keyStart = -1
  let keyEnd = -1
  let field: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === quote) {
      const start = i
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === backslash) i++
        else if (d === quote) break
      }
      if (depth === 1 && rootIsObject) {
        keyStart = start
        keyEnd = i + 1
      }
    } else if (c === 0x3a /* : */) {
      if (depth === 1 && rootIsObject && keyStart >= 0) {
        field = Option.getOrUndefined(decodeKey(text.slice(keyStart, keyEnd)))
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (depth === 0) rootIsObject = c === 0x7b
      depth++
      if (depth > limit) return field ?? "body"
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--
      if (depth === 1) field = undefined
    }
  }
  return undefined
}

/** The current request's field nested too deeply, when its JSON body is. */
export const findTooDeep: Effect.Effect<Option.Option<string>, never, HttpServerRequest.HttpServerRequest> = Effect
  .gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!(request.headers["content-type"] ?? "").includes("json")) return Option.none()
    // Read once and cached: the payload decoder reads the same text.
    const text = yield* Effect.option(request.text)
    return Option.flatMap(text, (t) => Option.fromUndefinedOr(tooDeepField(t, MaxBodyDepth)))
  })

/**
 * Hostile schemas a tenant can bring, for the tests of the schema bounds and
 * the route fuzzer: `$ref` fan-out (each level references the next one `fanOut`
 * times, so a small document expands exponentially), JSON nested thousands of
 * levels, and patterns that backtrack exponentially on engines that backtrack.
 */
import { info } from "./OpenApiDocuments.ts"

/**
 * `$defs`/components `L0 ... L{depth}`: each level's object has `fanOut` properties, each a
 * `$ref` to the next level. Level 0 expanded holds fanOut^depth copies of the last one.
 */
export const fanOutSchemas = (depth: number, fanOut = 10, prefix = "#/components/schemas/") => {
  const schemas: Record<string, unknown> = {}
  for (let level = 0; level < depth; level++) {
    const properties: Record<string, unknown> = {}
    for (let i = 0; i < fanOut; i++) properties[`p${i}`] = { $ref: `${prefix}L${level + 1}` }
    schemas[`L${level}`] = { type: "object", properties }
  }
  schemas[`L${depth}`] = { type: "string" }
  return schemas
}

/** An OpenAPI 3.0 document whose one operation, `bomb`, takes a body of the fan-out schema L0. */
export const fanOutDocument = (depth: number, fanOut = 10, servers = [{ url: "https://api.example.com" }]) =>
  JSON.stringify({
    openapi: "3.0.3",
    info,
    servers,
    paths: {
      "/bomb": {
        post: {
          operationId: "bomb",
          requestBody: {
            required: true,
            content: { "application/json": { schema: { $ref: "#/components/schemas/L0" } } }
          },
          responses: { "200": { description: "OK" } }
        }
      }
    },
    components: { schemas: fanOutSchemas(depth, fanOut) }
  })

/** A JSON Schema whose `$defs` fan out `depth` levels from its root (an MCP tool's input schema, an outputSchema). */
export const fanOutJsonSchema = (depth: number, fanOut = 10): Record<string, unknown> => ({
  $ref: "#/$defs/L0",
  $defs: fanOutSchemas(depth, fanOut, "#/$defs/")
})

/** A JSON Schema `{"not":{"not":...{}}}`, `depth` + 1 JSON levels, as text: JSON.stringify would recurse. */
export const deepSchemaText = (depth: number): string => "{\"not\":".repeat(depth) + "{}" + "}".repeat(depth)

/** A value nested `depth` levels: `{"a":{"a":...}}`, as text. */
export const deepJsonText = (depth: number): string => "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)

/** A pattern that backtracks exponentially on a backtracking engine, and an input that makes it. */
export const backtracking = {
  pattern: "^(a+)+$",
  /** 28 `a`s and a `!`: about 1.7 s on V8's engine, doubling with each added `a`. */
  input: (length = 28) => "a".repeat(length) + "!"
} as const

/** Patterns a linear-time engine cannot run (a backreference, a lookahead, a lookbehind). */
export const nonLinearPatterns = ["^(a)\\1$", "^(?=a)a$", "(?<!a)b"] as const

/**
 * A schema whose validation is exponential in the value's depth on any JSON Schema validator:
 * both `anyOf` branches walk the whole rest of the value, and only the second one passes.
 * With `exponentialValue(40)` it would run for days; errors never pile up (each anyOf passes).
 */
export const exponentialSchema: Record<string, unknown> = {
  $ref: "#/$defs/n",
  $defs: {
    n: {
      anyOf: [
        { properties: { a: { $ref: "#/$defs/n" } }, required: ["never"] },
        { properties: { a: { $ref: "#/$defs/n" } } }
      ]
    }
  }
}

/** `{"a":{"a":...1}}`, `depth` levels: the value for exponentialSchema. */
export const exponentialValue = (depth: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = { a: value }
  return value
}

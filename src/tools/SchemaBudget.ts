/**
 * The bounds on every JSON Schema a tenant brings (an HTTP connection's OpenAPI
 * document, a run's or a task's `outputSchema`, an MCP tool's input and output
 * schemas) and on the JSON the service walks for them, in one place, with the
 * walk that measures against them. The walk is iterative and stops as soon as a
 * bound is passed: a schema whose `$ref`s fan out (a graph sharing its nodes, a
 * few kilobytes that would expand to gigabytes) costs at most the budget to
 * measure, and nothing nested deeply can exhaust the stack. Every limit here is
 * listed in docs/reference/limits.md.
 */

export const SchemaLimits = {
  /** JSON nesting levels of one schema, its `$ref`s expanded (objects and arrays both count). */
  maxDepth: 64,
  /** One tool's input schema as offered to the model, `$ref`s expanded, in JSON characters. */
  maxToolSchemaBytes: 256 * 1024,
  /** All the tool input schemas of one HTTP connection together, expanded. */
  maxConnectionSchemaBytes: 4 * 1024 * 1024,
  /** A schema the service validates values with: an `outputSchema`, an MCP tool's `outputSchema`. */
  maxValidatedSchemaBytes: 64 * 1024,
  /** Nesting levels of a value validated against a schema (a structured answer, structured tool content). */
  maxValueDepth: 128,
  /** Real time one schema check or one validation may take in the validation worker. */
  validationTimeoutMs: 2_000
} as const

/** Nesting levels of any JSON request body (http/BodyDepth.ts). */
export const MaxBodyDepth = 128

export type Measured =
  | { readonly _tag: "Within"; readonly bytes: number }
  | { readonly _tag: "TooDeep"; readonly limit: number }
  | { readonly _tag: "TooLarge"; readonly limit: number }

const scalarBytes = (value: unknown): number =>
  typeof value === "string" ? value.length + 2 : typeof value === "number" ? String(value).length : 5

/**
 * The size in JSON characters (close to JSON.stringify's, keys and punctuation counted) and
 * the depth of `value` as JSON would write it: a node shared by several parents counts once
 * per parent. Stops at the first bound passed; `startBytes` carries a budget already spent.
 */
export const measure = (
  value: unknown,
  limits: { readonly maxDepth: number; readonly maxBytes: number },
  startBytes = 0
): Measured => {
  let bytes = startBytes
  const stack: Array<readonly [unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (typeof node !== "object" || node === null) {
      bytes += scalarBytes(node)
    } else {
      if (depth > limits.maxDepth) return { _tag: "TooDeep", limit: limits.maxDepth }
      bytes += 2
      if (Array.isArray(node)) {
        for (const item of node) {
          bytes += 1
          stack.push([item, depth + 1])
        }
      } else {
        for (const [key, item] of Object.entries(node)) {
          bytes += key.length + 4
          stack.push([item, depth + 1])
        }
      }
    }
    if (bytes > limits.maxBytes) return { _tag: "TooLarge", limit: limits.maxBytes }
  }
  return { _tag: "Within", bytes }
}

/** Why a measured value is refused ("is nested deeper than 64 levels"), or undefined when it is within its bounds. */
export const problemOf = (measured: Measured): string | undefined =>
  measured._tag === "TooDeep"
    ? `is nested deeper than ${measured.limit} levels`
    : measured._tag === "TooLarge"
    ? `is larger than ${measured.limit} bytes`
    : undefined

/** A schema the service validates with: within maxDepth and maxValidatedSchemaBytes. */
export const validatedSchemaProblem = (schema: unknown): string | undefined =>
  problemOf(measure(schema, { maxDepth: SchemaLimits.maxDepth, maxBytes: SchemaLimits.maxValidatedSchemaBytes }))

/** A tool's input schema offered to the model: within maxDepth and maxToolSchemaBytes, `$ref`s expanded. */
export const toolSchemaProblem = (schema: unknown): string | undefined =>
  problemOf(measure(schema, { maxDepth: SchemaLimits.maxDepth, maxBytes: SchemaLimits.maxToolSchemaBytes }))

/** Whether `value` is nested deeper than `limit` levels, walked without recursion. */
export const deeperThan = (value: unknown, limit: number): boolean =>
  measure(value, { maxDepth: limit, maxBytes: Number.POSITIVE_INFINITY })._tag === "TooDeep"

/**
 * `outputSchema`: the final answer must be JSON satisfying the run's JSON
 * Schema. Anything else means no structured value was produced: `output` stays
 * undefined, and the reason is said. The schema is checked when the run (or a
 * delegated task) starts, and every validation runs in the validation worker
 * with linear-time patterns and a time limit (src/tools/SchemaWorker.ts), so no
 * schema or answer can hold the service.
 */
import { Data, Effect, Option, Schema } from "effect"
import * as SchemaWorker from "../tools/SchemaWorker.ts"

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

/**
 * Why `schema` cannot be a run's or a task's outputSchema (400 at run start, a tool error for
 * delegate_task), as a sentence about `outputSchema`, or undefined when it can.
 */
export const schemaProblem = (schema: Readonly<Record<string, unknown>>): Effect.Effect<string | undefined> =>
  Effect.map(SchemaWorker.check(schema), (problem) => (problem === undefined ? undefined : `outputSchema ${problem}`))

export type Extracted = Data.TaggedEnum<{
  Value: { readonly value: unknown }
  Invalid: { readonly message: string }
}>
export const Extracted = Data.taggedEnum<Extracted>()

export const extract = (text: string, schema: Readonly<Record<string, unknown>>): Effect.Effect<Extracted> => {
  const trimmed = text.trim().replace(/^```(?:json)?\s*|\s*```$/g, "")
  const parsed = decodeJson(trimmed)
  if (Option.isNone(parsed)) return Effect.succeed(Extracted.Invalid({ message: "the final answer is not JSON" }))
  return Effect.map(SchemaWorker.validate(schema, parsed.value), (validation) => {
    switch (validation._tag) {
      case "Valid":
        return Extracted.Value({ value: parsed.value })
      case "Invalid":
        return Extracted.Invalid({ message: `the final answer does not match outputSchema: ${validation.message}` })
      case "Refused":
        return Extracted.Invalid({ message: `outputSchema ${validation.problem}` })
    }
  })
}

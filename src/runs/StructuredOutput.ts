/**
 * `outputSchema`: the final answer must be JSON satisfying the run's JSON
 * Schema (validated with Ajv). Anything else means no structured value was
 * produced: `output` stays undefined.
 */
import { Ajv } from "ajv"
import { Data, Option, Schema } from "effect"

const ajv = new Ajv({ allErrors: true, strict: false })
const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

/** The schema itself is checked when the run is started (400 on an invalid schema). */
export const schemaProblem = (schema: Readonly<Record<string, unknown>>): string | undefined => {
  const valid = ajv.validateSchema(schema)
  return valid === true ? undefined : ajv.errorsText(ajv.errors, { dataVar: "outputSchema" })
}

export type Extracted = Data.TaggedEnum<{
  Value: { readonly value: unknown }
  Invalid: { readonly message: string }
}>
export const Extracted = Data.taggedEnum<Extracted>()

export const extract = (text: string, schema: Readonly<Record<string, unknown>>): Extracted => {
  const trimmed = text.trim().replace(/^```(?:json)?\s*|\s*```$/g, "")
  const parsed = decodeJson(trimmed)
  if (Option.isNone(parsed)) return Extracted.Invalid({ message: "the final answer is not JSON" })
  const validate = ajv.compile(schema)
  return validate(parsed.value)
    ? Extracted.Value({ value: parsed.value })
    : Extracted.Invalid({ message: `the final answer does not match outputSchema: ${ajv.errorsText(validate.errors)}` })
}

/**
 * The fields our tools' inputs are made of (ToolDef.ts), each described for
 * the model by its annotation and offered with the JSON schema constraints it
 * checks: a non-empty string is `minLength: 1`, a count an integer of at
 * least 1, a choice an `enum`. Inputs are structs of these, `optional` for a
 * field that may be left out.
 */
import { Schema } from "effect"

export const optional = Schema.optionalKey

/** Any string, the empty one too. */
export const Text = (description: string) => Schema.String.annotate({ description })

/** A string of at least one character. */
export const NonEmpty = (description: string) => Schema.String.check(Schema.isMinLength(1)).annotate({ description })

/** An integer of at least 1 (offered as `{ type: "integer", minimum: 1 }`). */
export const Count = (description: string) =>
  Schema.Number.check(
    Schema.isInt({ toJsonSchema: () => ({ type: "integer" }) }),
    Schema.isGreaterThanOrEqualTo(1)
  ).annotate({ description })

export const Flag = (description: string) => Schema.Boolean.annotate({ description })

/** One of `choices`. */
export const OneOf = <const L extends ReadonlyArray<string>>(choices: L, description: string) =>
  Schema.Literals(choices).annotate({ description })

/** Non-empty strings. */
export const NonEmptyList = (description: string) =>
  Schema.Array(Schema.String.check(Schema.isMinLength(1))).annotate({ description })

/** Names to string values (file contents by name, a workflow's inputs). */
export const Strings = (description: string) => Schema.Record(Schema.String, Schema.String).annotate({ description })

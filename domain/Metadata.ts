/**
 * `metadata`: a flat string-to-string map. Limits: at most 50 keys, keys of
 * 1 to 40 characters, values of at most 500 characters.
 */
import { Schema } from "effect"

export const MetadataLimits = { maxKeys: 50, maxKeyLength: 40, maxValueLength: 500 } as const

const checkKeys = Schema.makeFilter<Readonly<Record<string, unknown>>>((record) => {
  const keys = Object.keys(record)
  if (keys.length > MetadataLimits.maxKeys) {
    return `metadata has ${keys.length} keys; at most ${MetadataLimits.maxKeys} are allowed`
  }
  const issues: Array<Schema.FilterIssue> = []
  for (const key of keys) {
    if (key.length === 0 || key.length > MetadataLimits.maxKeyLength) {
      issues.push({ path: [key], issue: `metadata keys must be 1 to ${MetadataLimits.maxKeyLength} characters` })
    }
  }
  return issues
})

export const MetadataValue = Schema.String.check(
  Schema.isMaxLength(MetadataLimits.maxValueLength, {
    message: `metadata values must be at most ${MetadataLimits.maxValueLength} characters`
  })
)

export const Metadata = Schema.Record(Schema.String, MetadataValue).check(checkKeys).annotate({
  identifier: "Metadata",
  description: "Flat string-to-string map: at most 50 keys, keys 1-40 characters, values at most 500 characters."
})
export type Metadata = typeof Metadata.Type

/** On update: merges per key; `null` deletes a key. */
export const MetadataPatch = Schema.Record(Schema.String, Schema.NullOr(MetadataValue)).check(checkKeys).annotate({
  identifier: "MetadataPatch",
  description: "Merged per key into the stored metadata; a null value deletes that key."
})
export type MetadataPatch = typeof MetadataPatch.Type

/** Applies a patch; returns an error message when the result breaks the key limit. */
export const applyMetadataPatch = (current: Metadata, patch: MetadataPatch | undefined): Metadata | string => {
  if (patch === undefined) return current
  const next: Record<string, string> = { ...current }
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key]
    else next[key] = value
  }
  if (Object.keys(next).length > MetadataLimits.maxKeys) {
    return `metadata would have ${Object.keys(next).length} keys; at most ${MetadataLimits.maxKeys} are allowed`
  }
  return next
}

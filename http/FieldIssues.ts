/**
 * A schema failure as a list of field issues (`capabilities.mcp.toolServerIds[0]`-style
 * paths, "" for the value itself) and as one line: how the service words a
 * request it refuses, and how the client words an input it refuses before sending.
 */
import { SchemaIssue } from "effect"

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

export interface FieldIssue {
  readonly field: string
  readonly message: string
}

const fieldPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path.reduce<string>((acc, segment) => {
    const key = typeof segment === "object" ? segment.key : segment
    if (typeof key === "number") return `${acc}[${key}]`
    return acc === "" ? String(key) : `${acc}.${String(key)}`
  }, "")

export const fieldIssues = (issue: SchemaIssue.Issue): ReadonlyArray<FieldIssue> =>
  formatIssues(issue).issues.map((i) => ({ field: fieldPath(i.path ?? []), message: i.message }))

/** `field: message; other.field: message` (a top-level issue without a field). */
export const issueLine = (issues: ReadonlyArray<FieldIssue>): string =>
  issues.map((i) => (i.field === "" ? i.message : `${i.field}: ${i.message}`)).join("; ")

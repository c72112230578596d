/**
 * Text the service did not get from a client (model output, MCP and HTTP tool
 * results, hook answers, tool inputs the model wrote) may hold U+0000, which
 * PostgreSQL text and jsonb cannot store. Such text is stored (and streamed)
 * with every U+0000 replaced by U+FFFD, the replacement character: the run
 * goes on, a reader sees where something was, and nothing else changes.
 * Requests never get here with a NUL: the API refuses them (http/NulGuard.ts).
 */

const NUL = /\u0000/g
const REPLACEMENT = "\uFFFD"

/** Whether a string or key anywhere in `value` holds a NUL. */
export const hasNul = (value: unknown): boolean => {
  if (typeof value === "string") return value.includes("\u0000")
  if (Array.isArray(value)) return value.some(hasNul)
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).some(([key, item]) => key.includes("\u0000") || hasNul(item))
  }
  return false
}

const scrub = (value: unknown): unknown => {
  if (typeof value === "string") return value.replace(NUL, REPLACEMENT)
  if (Array.isArray(value)) return value.map(scrub)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.replace(NUL, REPLACEMENT), scrub(item)]))
  }
  return value
}

/** `value` with every NUL in its strings and keys replaced by U+FFFD; `value` itself when it holds none. */
export const nulFree = (value: unknown): unknown => (hasNul(value) ? scrub(value) : value)

/** A text column's value, the same way. */
export const nulFreeText = <S extends string | null>(
  text: S
): S | string => (text === null ? text : text.replace(NUL, REPLACEMENT))

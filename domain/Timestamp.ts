/**
 * ISO 8601 instants as clients send them in a query (`createdSince`), decoded
 * to the form every stored timestamp has (`2026-01-31T09:30:00.000Z`, UTC,
 * milliseconds), so that comparing them as text compares instants.
 *
 * Accepted: a date and time with seconds optional, fractions of a second
 * optional (cut to milliseconds) and a zone required (`Z` or `+hh:mm`):
 * `2026-01-31T10:30:00+01:00`; or a date alone, `2026-01-31`, which means
 * that day's midnight UTC. Refused: anything else, including dates that do not
 * exist (`2026-02-30`) and a time without a zone (whose instant is unknown).
 */
import { Schema, SchemaTransformation } from "effect"

const shape = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2})))?$/

const isInstant = (text: string): boolean => {
  const match = shape.exec(text)
  if (match === null) return false
  const [year, month, day, hour, minute, second, zoneHour, zoneMinute] = match.slice(1).map((part) =>
    Number(part ?? "0")
  )
  // Date.UTC rolls 2026-02-30 over to March: a date exists when it comes back unchanged.
  const date = new Date(Date.UTC(year, month - 1, day))
  const exists = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  return exists && hour < 24 && minute < 60 && second < 60 && zoneHour < 24 && zoneMinute < 60 &&
    !Number.isNaN(Date.parse(text))
}

const canonical = (text: string): string => new Date(Date.parse(text)).toISOString()

export const InstantFromString = Schema.String.check(
  Schema.makeFilter(isInstant, {
    message: "must be an ISO 8601 date-time with a zone (2026-01-31T09:30:00Z) or a date (2026-01-31)"
  })
).pipe(Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: canonical, encode: (s: string) => s })))

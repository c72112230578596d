/** Timestamps come from `Clock`, so TestClock controls every one of them. */
import { Clock, DateTime, Effect, Option } from "effect"

export const toIso = (millis: number): string => new Date(millis).toISOString()

/** Now, as fixed-width ISO-8601 UTC text (sorts as text). */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, toIso)

/** An IANA zone name (`Europe/Paris`, `UTC`); Intl also accepts offsets such as `+02:00`, which are not zones. */
export const isIanaZone = (tz: string): boolean =>
  /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz) && Option.isSome(DateTime.zoneMakeNamed(tz))

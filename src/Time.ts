/** Timestamps come from `Clock`, so TestClock controls every one of them. */
import { Clock, Effect } from "effect"

export const toIso = (millis: number): string => new Date(millis).toISOString()

/** Now, as fixed-width ISO-8601 UTC text (sorts as text). */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, toIso)

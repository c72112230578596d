/**
 * Rate limits and quotas as configured (README "Rate limits and quotas"):
 * request rates per API key and per organization (SVC_RATE_KEY, SVC_RATE_ORG),
 * the active runs a workspace may have (SVC_MAX_ACTIVE_RUNS_PER_WORKSPACE) and
 * the spend quota of each organization per UTC calendar period
 * (SVC_ORG_SPEND_QUOTA). Every limit is off when its variable is unset.
 */
import { Effect } from "effect"
import { isOrganizationId } from "../../domain/ApiKey.ts"
import { ConfigurationError } from "../config/ConfigurationError.ts"

/** A token bucket: `perSecond` tokens refill each second, up to `burst`. */
export interface RateSpec {
  readonly perSecond: number
  readonly burst: number
}

export type QuotaPeriod = "day" | "month"

export interface SpendQuota {
  readonly cents: number
  readonly period: QuotaPeriod
}

export interface LimitsConfig {
  readonly keyRate: RateSpec | null
  readonly orgRate: RateSpec | null
  /** Runs queued, preparing or running at once per workspace (parked runs do not count). */
  readonly maxActiveRunsPerWorkspace: number | null
  /** Quotas by organization; `"*"` applies to every organization not named. */
  readonly spendQuotas: ReadonlyMap<string, SpendQuota>
}

export const noLimits: LimitsConfig = {
  keyRate: null,
  orgRate: null,
  maxActiveRunsPerWorkspace: null,
  spendQuotas: new Map()
}

const invalid = (name: string, message: string) => new ConfigurationError({ message: `${name}: ${message}` })

/** `<per second>/<burst>`, e.g. `10/20` or `0.5/5`; empty is off. */
export const parseRate = (name: string, raw: string): Effect.Effect<RateSpec | null, ConfigurationError> => {
  if (raw.trim() === "") return Effect.succeed(null)
  const match = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+)\s*$/.exec(raw)
  const perSecond = Number(match?.[1])
  const burst = Number(match?.[2])
  if (match === null || !(perSecond > 0) || !(burst >= 1)) {
    return Effect.fail(
      invalid(name, `expected <requests per second>/<burst> with both above 0, e.g. 10/20; got '${raw}'`)
    )
  }
  return Effect.succeed({ perSecond, burst })
}

/** A positive integer; empty is unlimited. */
export const parseCap = (name: string, raw: string): Effect.Effect<number | null, ConfigurationError> => {
  if (raw.trim() === "") return Effect.succeed(null)
  const n = Number(raw)
  return Number.isInteger(n) && n >= 1
    ? Effect.succeed(n)
    : Effect.fail(invalid(name, `expected an integer >= 1, got '${raw}'`))
}

const quotaShape = /^(\d+(?:\.\d+)?)\/(day|month)$/

/**
 * `<cents>/<day|month>` for every organization, or `;`-separated
 * `<organization>=<cents>/<period>` entries where `*` names every other one:
 * `org_a=5000/month;*=1000/day`.
 */
export const parseQuotas = (
  name: string,
  raw: string
): Effect.Effect<ReadonlyMap<string, SpendQuota>, ConfigurationError> =>
  Effect.gen(function*() {
    const quotas = new Map<string, SpendQuota>()
    for (const entry of raw.split(";").map((s) => s.trim()).filter((s) => s.length > 0)) {
      const at = entry.indexOf("=")
      const organization = at < 0 ? "*" : entry.slice(0, at).trim()
      const match = quotaShape.exec(entry.slice(at + 1).trim())
      if (match === null || organization === "") {
        return yield* invalid(
          name,
          `expected <cents>/<day|month> or <organization>=<cents>/<day|month> entries; got '${entry}'`
        )
      }
      if (organization !== "*" && !isOrganizationId(organization)) {
        return yield* invalid(
          name,
          `'${organization}' is not an organization id (org_ then letters, digits, '_' or '-')`
        )
      }
      if (quotas.has(organization)) return yield* invalid(name, `'${organization}' is given twice`)
      quotas.set(organization, { cents: Number(match[1]), period: match[2] === "day" ? "day" : "month" })
    }
    return quotas
  })

export const quotaOf = (config: LimitsConfig, organizationId: string): SpendQuota | undefined =>
  config.spendQuotas.get(organizationId) ?? config.spendQuotas.get("*")

/** The UTC calendar period containing `nowMs`: its first millisecond and the first of the next. */
export const periodOf = (period: QuotaPeriod, nowMs: number): { readonly start: number; readonly end: number } => {
  const now = new Date(nowMs)
  const year = now.getUTCFullYear()
  const month = now.getUTCMonth()
  return period === "day"
    ? { start: Date.UTC(year, month, now.getUTCDate()), end: Date.UTC(year, month, now.getUTCDate() + 1) }
    : { start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) }
}

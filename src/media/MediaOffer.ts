/**
 * What `capabilities.media` asks for and what a deployment has: the kinds an
 * agent's setting enables (`true`: every kind the deployment has; the object
 * form: the kinds set to true), the one refusal rule for a kind the
 * deployment lacks (`media_runtime_unconfigured`, naming it) or a strict agent
 * asking for a kind whose route is not strict-capable, and the `media` field
 * of `GET /v1/bands`.
 */
import type { AgentCapabilities } from "../../domain/Agent.ts"
import type { PlannedMedia } from "../../domain/Media.ts"
import { type MediaConfig, type MediaKind, MediaKinds, UnitOf } from "./MediaConfig.ts"

type MediaSetting = NonNullable<AgentCapabilities["media"]>

/** A kind as the deployment offers it on `GET /v1/bands`. */
export interface KindOffer {
  readonly route: string
  readonly unit: (typeof UnitOf)[MediaKind]
  /** US cents per unit; null: unpriced (runs with a cost limit cannot use it). */
  readonly centsPerUnit: number | null
  readonly strict: boolean
}

export type MediaOffer = Readonly<Record<MediaKind, KindOffer | null>>

export const offerOf = (config: MediaConfig): MediaOffer => {
  const offer = {} as Record<MediaKind, KindOffer | null>
  for (const kind of MediaKinds) {
    const route = config.routes[kind]
    offer[kind] = route === null
      ? null
      : { route: route.route, unit: UnitOf[kind], centsPerUnit: route.centsPerUnit, strict: route.strict }
  }
  return offer
}

/** The kinds a setting enables on a deployment with `offer`: `true` takes every kind it has. */
export const enabledKinds = (setting: MediaSetting | undefined, offer: MediaOffer): ReadonlyArray<MediaKind> =>
  setting === undefined || setting === false
    ? []
    : setting === true
    ? MediaKinds.filter((k) => offer[k] !== null)
    : MediaKinds.filter((k) => setting[k] === true)

export interface MediaRefusal {
  readonly field: string
  readonly message: string
  readonly code: "media_runtime_unconfigured" | "strict_data_handling_unavailable"
}

/**
 * Why `setting` cannot be served here, or undefined: `true` on a deployment with no kind, a kind
 * the deployment lacks, or (strict) a kind whose route is not strict-capable.
 */
export const mediaRefusal = (
  setting: MediaSetting | undefined,
  offer: MediaOffer,
  strict: boolean
): MediaRefusal | undefined => {
  if (setting === undefined || setting === false) return undefined
  if (setting === true && MediaKinds.every((k) => offer[k] === null)) {
    return {
      field: "capabilities.media",
      message: "No media generation route is configured on this deployment (SVC_MEDIA_*).",
      code: "media_runtime_unconfigured"
    }
  }
  const kinds = enabledKinds(setting, offer)
  const missing = kinds.find((k) => offer[k] === null)
  if (missing !== undefined) {
    return {
      field: `capabilities.media.${missing}`,
      message: `Media kind '${missing}' is not configured on this deployment (see GET /v1/bands media).`,
      code: "media_runtime_unconfigured"
    }
  }
  const loose = strict ? kinds.find((k) => offer[k]?.strict !== true) : undefined
  if (loose !== undefined) {
    return {
      field: setting === true ? "capabilities.media" : `capabilities.media.${loose}`,
      message: `Strict data handling is required but this deployment's ${loose} route (${
        offer[loose]?.route
      }) is not marked strict-capable (SVC_MEDIA_STRICT).`,
      code: "strict_data_handling_unavailable"
    }
  }
  return undefined
}

/** The enabled kinds as a run freezes them at start: route, unit and price. */
export const planned = (setting: MediaSetting | undefined, offer: MediaOffer): ReadonlyArray<PlannedMedia> =>
  enabledKinds(setting, offer).flatMap((kind) => {
    const o = offer[kind]
    return o === null ? [] : [{ kind, route: o.route, unit: o.unit, centsPerUnit: o.centsPerUnit }]
  })

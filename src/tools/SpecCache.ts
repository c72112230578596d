/**
 * Parsed OpenAPI documents of HTTP connections, cached per (connection,
 * configVersion) for a short time-to-live (spec 4.7 rule 8). A structural
 * update bumps configVersion, so it never reads a stale entry; failures are
 * not cached, so a fixed document is picked up by the next turn.
 */
import { Clock, Effect } from "effect"
import type { GuardedFetch } from "../outbound/Outbound.ts"
import * as OpenApiSpec from "./OpenApiSpec.ts"

export const SpecTtlMs = 60_000

export interface SpecCache {
  readonly load: (
    connectionId: string,
    configVersion: number,
    spec: string,
    timeoutMs: number
  ) => Effect.Effect<OpenApiSpec.LoadedSpec, OpenApiSpec.SpecFailure>
}

export const make = (fetch: GuardedFetch): SpecCache => {
  const entries = new Map<string, { readonly expiresAt: number; readonly loaded: OpenApiSpec.LoadedSpec }>()
  return {
    load: (connectionId, configVersion, spec, timeoutMs) =>
      Effect.gen(function*() {
        const key = `${connectionId}:${configVersion}`
        const now = yield* Clock.currentTimeMillis
        const hit = entries.get(key)
        if (hit !== undefined && hit.expiresAt > now) return hit.loaded
        const loaded = yield* OpenApiSpec.load(spec, fetch, timeoutMs)
        for (const [k, entry] of entries) {
          if (entry.expiresAt <= now || k.startsWith(`${connectionId}:`)) entries.delete(k)
        }
        entries.set(key, { expiresAt: now + SpecTtlMs, loaded })
        return loaded
      })
  }
}

/**
 * Canonical JSON (object keys sorted): the same value always gives the same
 * text, whatever key order a client or the database used. Used to detect
 * real configuration changes and to hash idempotent request bodies.
 */
import { createHash } from "node:crypto"

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key]
      if (v !== undefined) out[key] = sortKeys(v)
    }
    return out
  }
  return value
}

export const canonicalJson = (value: unknown): string => JSON.stringify(sortKeys(value)) ?? "null"

export const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex")

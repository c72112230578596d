/** The one place ids are minted: a spec prefix plus 128 random bits in base62. */
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { type IdKind, IdPrefix } from "../domain/Ids.ts"

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** Fixed width: 16 bytes always give 22 characters, 32 bytes 43. */
const base62 = (bytes: Uint8Array, width: number): string => {
  let n = 0n
  for (const b of bytes) n = (n << 8n) | BigInt(b)
  let out = ""
  while (n > 0n) {
    out = alphabet[Number(n % 62n)] + out
    n /= 62n
  }
  return out.padStart(width, "0")
}

/** Unguessable: 16 bytes from the OS CSPRNG. */
export const newIdSync = (kind: IdKind): string => IdPrefix[kind] + base62(randomBytes(16), 22)

export const newId = (kind: IdKind): Effect.Effect<string> => Effect.sync(() => newIdSync(kind))

/** A secret token (API keys): 32 random bytes, base62. */
export const newSecretToken = (prefix: string): string => prefix + base62(randomBytes(32), 43)

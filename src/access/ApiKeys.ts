/**
 * API keys. A key belongs to one organization and one workspace and is stored
 * only as a SHA-256 hash (keys are 256-bit random tokens, so a fast hash is
 * enough). Keys are seeded from SVC_API_KEYS, minted by the CLI, or, on a
 * fresh embedded install with no keys at all, minted once as a development key.
 */
import { Clock, Context, Effect, Layer, Redacted } from "effect"
import { Unauthenticated } from "../../domain/Errors.ts"
import type { ApiKeyId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import { sha256Hex } from "../CanonicalJson.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { ApiKeyRepo } from "../store/ApiKeyRepo.ts"
import { nowIso } from "../Time.ts"

export type KeySource = "seed" | "cli" | "dev"

export interface MintedKey {
  readonly id: ApiKeyId
  readonly key: Redacted.Redacted
  readonly organizationId: string
  readonly workspaceId: string
}

/** How long a valid key is remembered; invalid keys are never remembered. */
const keyCacheMs = 5_000
const maxCachedKeys = 10_000

const keyShape = /^[A-Za-z0-9_\-.~+/=]{1,256}$/
const orgShape = /^[A-Za-z0-9_-]{1,64}$/

/**
 * What is kept of a key beside its hash, to tell keys apart in listings: its
 * first seven characters, but never more than a quarter of it (a short seeded
 * key must not be stored nearly whole).
 */
export const displayPrefix = (key: string): string => key.slice(0, Math.min(7, Math.floor(key.length / 4)))

export class ApiKeys extends Context.Service<ApiKeys, {
  readonly authenticate: (token: Redacted.Redacted) => Effect.Effect<Principal, Unauthenticated>
  /** Stores a key given in configuration (idempotent). */
  readonly seed: (key: Redacted.Redacted, organizationId: string, workspaceId: string) => Effect.Effect<void>
  readonly mint: (organizationId: string, workspaceId: string, source: KeySource) => Effect.Effect<MintedKey>
  readonly count: Effect.Effect<number>
}>()("svc/ApiKeys") {
  static readonly layer = Layer.effect(ApiKeys)(
    Effect.gen(function*() {
      const repo = yield* ApiKeyRepo
      const ids = yield* IdGenerator
      /** Keys seen valid lately: a burst of requests costs one lookup (a key removed elsewhere stops working within keyCacheMs). */
      const recent = new Map<string, { readonly principal: Principal; readonly until: number }>()
      const insert = (key: Redacted.Redacted, organizationId: string, workspaceId: string, source: KeySource) =>
        Effect.gen(function*() {
          const id = yield* ids.make("apiKey")
          const value = Redacted.value(key)
          yield* repo.upsert({
            id,
            hash: sha256Hex(value),
            prefix: displayPrefix(value),
            organizationId,
            workspaceId,
            source,
            createdAt: yield* nowIso
          })
          return id
        })

      return {
        authenticate: Effect.fn("ApiKeys.authenticate")(function*(token: Redacted.Redacted) {
          const value = Redacted.value(token)
          if (!keyShape.test(value)) return yield* new Unauthenticated({ message: "The API key is malformed." })
          const hash = sha256Hex(value)
          const now = yield* Clock.currentTimeMillis
          const cached = recent.get(hash)
          if (cached !== undefined && cached.until > now) return cached.principal
          const principal = yield* repo.principalOf(hash)
          if (principal === undefined) {
            recent.delete(hash)
            return yield* new Unauthenticated({ message: "The API key is not valid." })
          }
          if (recent.size >= maxCachedKeys) recent.clear()
          recent.set(hash, { principal, until: now + keyCacheMs })
          return principal
        }),
        seed: Effect.fn("ApiKeys.seed")(function*(key: Redacted.Redacted, organizationId: string, workspaceId: string) {
          if (!keyShape.test(Redacted.value(key)) || !orgShape.test(organizationId) || !orgShape.test(workspaceId)) {
            return yield* Effect.die(new Error("SVC_API_KEYS: keys, organizations and workspaces use [A-Za-z0-9_-]"))
          }
          yield* insert(key, organizationId, workspaceId, "seed")
        }),
        mint: Effect.fn("ApiKeys.mint")(function*(organizationId: string, workspaceId: string, source: KeySource) {
          const key = yield* ids.secretToken("sk_")
          const id = yield* insert(key, organizationId, workspaceId, source)
          return { id, key, organizationId, workspaceId }
        }),
        count: repo.count
      }
    })
  ).pipe(Layer.provide(ApiKeyRepo.layer))
}

export const isValidScopeName = (s: string): boolean => orgShape.test(s)

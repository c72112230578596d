/**
 * API keys. A key belongs to one organization and one workspace, has a role
 * (`member`, or `admin` of its organization) and is stored only as a SHA-256
 * hash (keys are 256-bit random tokens, so a fast hash is enough). Keys are
 * seeded from SVC_API_KEYS, created by an admin key through the API, or, on a
 * fresh embedded install with no keys at all, minted once as a development
 * (admin) key. An admin key lists and revokes its organization's keys.
 *
 * Each process remembers a key it found valid for `keyCacheMs` (5 s), so a
 * burst of requests costs one lookup. A revoked key is forgotten at once by
 * the process that revoked it, and refused by every other process within
 * `keyCacheMs`: the bound of a revocation (docs/operations/security.md).
 */
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import {
  type ApiKey,
  type ApiKeyCreate,
  type ApiKeyCreated,
  type ApiKeyRole,
  isKeyShaped,
  isOrganizationId,
  isWorkspaceName
} from "../../domain/ApiKey.ts"
import { NotFound, PermissionDenied, Unauthenticated } from "../../domain/Errors.ts"
import type { ApiKeyId } from "../../domain/Ids.ts"
import type { PageOf, PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { sha256Hex } from "../CanonicalJson.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { ApiKeyRepo, type KeyRecord } from "../store/ApiKeyRepo.ts"
import { pageWindow, toPage } from "../store/Cursor.ts"
import { nowIso, toIso } from "../Time.ts"

export type KeySource = "seed" | "api" | "dev"

export interface MintOptions {
  readonly source: KeySource
  readonly name: string
  readonly role: ApiKeyRole
}

export interface MintedKey {
  readonly key: Redacted.Redacted
  readonly record: KeyRecord
}

/** How long a valid key is remembered by a process: the bound within which a revocation reaches every process. */
export const keyCacheMs = 5_000
const maxCachedKeys = 10_000

/**
 * What is kept of a key beside its hash, to tell keys apart in listings: its
 * first seven characters, but never more than a quarter of it (a short seeded
 * key must not be stored nearly whole).
 */
export const displayPrefix = (key: string): string => key.slice(0, Math.min(7, Math.floor(key.length / 4)))

/** A stored key as the API lists it. */
export const apiKeyView = (r: KeyRecord): ApiKey => ({
  id: r.id,
  object: "api_key",
  name: r.name,
  prefix: r.prefix,
  workspace: r.workspaceId,
  role: r.role,
  createdAt: r.createdAt,
  lastUsedAt: r.lastUsedAt,
  revokedAt: r.revokedAt
})

const requireAdmin = (principal: Principal) =>
  principal.role === "admin"
    ? Effect.void
    : Effect.fail(new PermissionDenied({ message: "Only an admin key of the organization manages its API keys." }))

export class ApiKeys extends Context.Service<ApiKeys, {
  readonly authenticate: (token: Redacted.Redacted) => Effect.Effect<Principal, Unauthenticated>
  /**
   * Stores a key given in configuration (idempotent; its scope and role follow
   * the configuration). Answers false for a key revoked through the API, which
   * stays revoked.
   */
  readonly seed: (
    key: Redacted.Redacted,
    organizationId: string,
    workspaceId: string,
    role: ApiKeyRole
  ) => Effect.Effect<boolean>
  /** Revokes the seed keys that are no longer in the configuration; answers how many. */
  readonly revokeRemovedSeeds: (configured: ReadonlyArray<Redacted.Redacted>) => Effect.Effect<number>
  readonly mint: (organizationId: string, workspaceId: string, options: MintOptions) => Effect.Effect<MintedKey>
  readonly count: Effect.Effect<number>
  /** POST /v1/api-keys: a key of the admin's organization; its secret is in this answer only. */
  readonly create: (principal: Principal, payload: ApiKeyCreate) => Effect.Effect<ApiKeyCreated, PermissionDenied>
  /** GET /v1/api-keys: the organization's keys, revoked ones included, newest first. */
  readonly list: (principal: Principal, page: PageRequest) => Effect.Effect<PageOf<ApiKey>, PermissionDenied>
  /** POST /v1/api-keys/:id/revoke: idempotent; answers the key with its (first) `revokedAt`. */
  readonly revoke: (principal: Principal, id: ApiKeyId) => Effect.Effect<ApiKey, PermissionDenied | NotFound>
}>()("svc/ApiKeys") {
  static readonly layer = Layer.effect(ApiKeys)(
    Effect.gen(function*() {
      const repo = yield* ApiKeyRepo
      const ids = yield* IdGenerator
      /** Keys seen valid lately, by hash. */
      const recent = new Map<string, { readonly principal: Principal; readonly until: number }>()
      const forget = (keyId: string) => {
        for (const [hash, entry] of recent) if (entry.principal.keyId === keyId) recent.delete(hash)
      }
      const newKey = (value: string, organizationId: string, workspaceId: string, options: MintOptions) =>
        Effect.gen(function*() {
          return {
            id: yield* ids.make("apiKey"),
            hash: sha256Hex(value),
            prefix: displayPrefix(value),
            name: options.name,
            organizationId,
            workspaceId,
            role: options.role,
            source: options.source,
            createdAt: yield* nowIso
          }
        })

      const mint = Effect.fn("ApiKeys.mint")(
        function*(organizationId: string, workspaceId: string, options: MintOptions) {
          const key = yield* ids.secretToken("sk_")
          const stored = yield* newKey(Redacted.value(key), organizationId, workspaceId, options)
          yield* repo.insert(stored)
          const record: KeyRecord = { ...stored, lastUsedAt: null, revokedAt: null }
          return { key, record }
        }
      )

      return {
        authenticate: Effect.fn("ApiKeys.authenticate")(function*(token: Redacted.Redacted) {
          const value = Redacted.value(token)
          if (!isKeyShaped(value)) return yield* new Unauthenticated({ message: "The API key is malformed." })
          const hash = sha256Hex(value)
          const now = yield* Clock.currentTimeMillis
          const cached = recent.get(hash)
          if (cached !== undefined && cached.until > now) return cached.principal
          const principal = yield* repo.use(hash, toIso(now))
          if (principal === undefined) {
            recent.delete(hash)
            return yield* new Unauthenticated({ message: "The API key is not valid." })
          }
          if (recent.size >= maxCachedKeys) recent.clear()
          recent.set(hash, { principal, until: now + keyCacheMs })
          return principal
        }),
        seed: Effect.fn("ApiKeys.seed")(
          function*(key: Redacted.Redacted, organizationId: string, workspaceId: string, role: ApiKeyRole) {
            const value = Redacted.value(key)
            if (!isKeyShaped(value) || !isOrganizationId(organizationId) || !isWorkspaceName(workspaceId)) {
              return yield* Effect.die(
                new Error("SVC_API_KEYS: an entry's key, organization (org_...) or workspace is malformed")
              )
            }
            const stored = yield* newKey(value, organizationId, workspaceId, {
              source: "seed",
              name: "SVC_API_KEYS",
              role
            })
            return yield* repo.upsertSeed(stored)
          }
        ),
        revokeRemovedSeeds: Effect.fn("ApiKeys.revokeRemovedSeeds")(
          function*(configured: ReadonlyArray<Redacted.Redacted>) {
            return yield* repo.revokeSeedsExcept(configured.map((k) => sha256Hex(Redacted.value(k))), yield* nowIso)
          }
        ),
        mint,
        count: repo.count,
        create: Effect.fn("ApiKeys.create")(function*(principal: Principal, payload: ApiKeyCreate) {
          yield* requireAdmin(principal)
          const minted = yield* mint(principal.organizationId, payload.workspace ?? principal.workspaceId, {
            source: "api",
            name: payload.name,
            role: payload.role ?? "member"
          })
          return { ...apiKeyView(minted.record), key: Redacted.value(minted.key) }
        }),
        list: Effect.fn("ApiKeys.list")(function*(principal: Principal, page: PageRequest) {
          yield* requireAdmin(principal)
          // The query schema refused foreign cursors before the handler ran.
          const { limit, after } = yield* Effect.orDie(pageWindow(page))
          const rows = yield* repo.list(principal.organizationId, limit, after)
          return toPage(rows, limit, apiKeyView)
        }),
        revoke: Effect.fn("ApiKeys.revoke")(function*(principal: Principal, id: ApiKeyId) {
          yield* requireAdmin(principal)
          const found = yield* repo.find(id)
          if (Option.isNone(found)) return yield* NotFound.of("api_key", id)
          if (found.value.organizationId !== principal.organizationId) {
            return yield* new PermissionDenied({ message: "This API key belongs to another organization." })
          }
          const revoked = yield* repo.revoke(id, yield* nowIso)
          forget(id)
          return apiKeyView(Option.getOrElse(revoked, () => found.value))
        })
      }
    })
  ).pipe(Layer.provide(ApiKeyRepo.layer))
}

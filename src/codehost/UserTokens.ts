/**
 * The installing person's token, for the account tools (snippets, repository
 * create and fork: spec 2.7 access.account) and to check their grant (sync,
 * test). GitHub App user tokens expire after 8 hours and come with a refresh
 * token (6 months, single use): both are sealed together beside the
 * connection (SecretBox), their expiry times kept in its state
 * (userGrant.expiresAt, refreshExpiresAt). A token about to expire is renewed
 * at `<web>/login/oauth/access_token` (grant_type=refresh_token) and the new
 * pair stored at once (the old refresh token no longer works). A renewal
 * GitHub refuses is a grant gone: the caller revokes it (status `revoked`,
 * with why and what to do: authorize again with this connectionId). One
 * renewal at a time per connection in a process; one that lost a race with
 * another process finds the pair that process stored and uses it.
 */
import { Clock, Data, Effect, Option, Redacted, Result, Schema, Semaphore } from "effect"
import type { ConnectionState, UserGrant } from "../../domain/Codehost.ts"
import type { CodehostConnectionId } from "../../domain/Ids.ts"
import type { Principal } from "../../domain/Principal.ts"
import type { Sealed, SecretBox } from "../secrets/SecretBox.ts"
import { toIso } from "../Time.ts"
import type { LoadedConnection } from "./Connections.ts"
import type { AppClient } from "./GitHubApp.ts"
import type { Issued } from "./OAuthTokens.ts"

/** Renewed this long before it expires: a call must not start with a token about to lapse. */
const marginMs = 5 * 60 * 1000

const Pair = Schema.Struct({ access: Schema.String, refresh: Schema.NullOr(Schema.String) })
const decodePair = Schema.decodeUnknownOption(Schema.fromJsonString(Pair))
const encodePair = Schema.encodeSync(Schema.fromJsonString(Pair))

/** What the person's grant gives now. */
export type Current = Data.TaggedEnum<{
  Token: { readonly token: Redacted.Redacted }
  /** No grant is stored. */
  None: {}
  /** GitHub refused to renew it: the grant is gone (revoke it with `reason`). */
  Refused: { readonly reason: string }
  /** GitHub could not be asked to renew it now. */
  Unavailable: { readonly reason: string }
}>
export const Current = Data.taggedEnum<Current>()

/** The sealed pair of an issued token and its expiry times from `nowMs`. */
export const sealIssued = (box: SecretBox["Service"], issued: Issued, nowMs: number) =>
  Effect.map(
    box.seal(
      Redacted.make(
        encodePair({
          access: Redacted.value(issued.access),
          refresh: issued.refresh === undefined ? null : Redacted.value(issued.refresh)
        })
      )
    ),
    (sealed) => ({
      sealed,
      expiry: {
        expiresAt: issued.expiresInSec === undefined ? null : toIso(nowMs + issued.expiresInSec * 1000),
        refreshExpiresAt: issued.refreshExpiresInSec === undefined
          ? null
          : toIso(nowMs + issued.refreshExpiresInSec * 1000)
      } satisfies Partial<UserGrant>
    })
  )

/** The stored pair; a grant sealed before refresh tokens were kept is its bare token. */
const openPair = (box: SecretBox["Service"], sealed: Sealed) =>
  Effect.map(box.open(sealed), (plain) =>
    Option.match(decodePair(Redacted.value(plain)), {
      onNone: () => ({ access: plain, refresh: undefined }),
      onSome: (p) => ({
        access: Redacted.make(p.access),
        refresh: p.refresh === null ? undefined : Redacted.make(p.refresh)
      })
    }))

const lapsed = (at: string | null | undefined, nowMs: number, margin = 0) =>
  at !== null && at !== undefined && Date.parse(at) - margin <= nowMs

export interface Deps {
  readonly box: SecretBox["Service"]
  readonly app: Effect.Effect<AppClient, unknown>
  readonly load: (principal: Principal, id: CodehostConnectionId) => Effect.Effect<LoadedConnection, unknown>
  /** Saves the connection's new state and sealed grant. */
  readonly store: (
    principal: Principal,
    current: LoadedConnection,
    next: ConnectionState,
    sealed: Sealed | null
  ) => Effect.Effect<void>
}

export const make = (deps: Deps) => {
  const locks = new Map<string, Semaphore.Semaphore>()
  const lockOf = (id: string) => {
    const existing = locks.get(id)
    if (existing !== undefined) return existing
    const made = Semaphore.makeUnsafe(1)
    locks.set(id, made)
    return made
  }

  const renew = (principal: Principal, id: CodehostConnectionId): Effect.Effect<Current> =>
    Effect.gen(function*() {
      // Loaded again under the lock: another fiber may have renewed it meanwhile.
      const loaded = yield* Effect.option(deps.load(principal, id))
      const held = Option.getOrUndefined(loaded)?.row.sealed
      if (Option.isNone(loaded) || held === undefined || held === null) return Current.None()
      const { config } = loaded.value
      const pair = yield* openPair(deps.box, held)
      const now = yield* Clock.currentTimeMillis
      if (!lapsed(config.userGrant.expiresAt, now, marginMs)) {
        return Current.Token({ token: pair.access })
      }
      if (pair.refresh === undefined || lapsed(config.userGrant.refreshExpiresAt, now)) {
        return Current.Refused({
          reason:
            "The installing person's authorization expired and cannot be renewed (its refresh token expired too); authorize again with this connectionId to capture a new one."
        })
      }
      const gh = yield* Effect.orDie(deps.app)
      const issued = yield* Effect.result(gh.refreshUserToken(pair.refresh))
      if (Result.isFailure(issued)) {
        const e = issued.failure
        if (e.status === 0) {
          return Current.Unavailable({
            reason: `GitHub could not renew the installing person's authorization now: ${e.message}`
          })
        }
        // Another process may have renewed it first with the same (single-use) refresh token.
        const again = yield* Effect.option(deps.load(principal, id))
        const stored = Option.getOrUndefined(again)?.row.sealed
        if (stored !== undefined && stored !== null && stored.ciphertext !== held.ciphertext) {
          return Current.Token({ token: (yield* openPair(deps.box, stored)).access })
        }
        return Current.Refused({
          reason:
            `The installing person's authorization expired and GitHub refused to renew it (${e.message}); authorize again with this connectionId to capture a new one.`
        })
      }
      const { sealed, expiry } = yield* sealIssued(deps.box, issued.success, now)
      yield* deps.store(principal, loaded.value, { ...config, userGrant: { ...config.userGrant, ...expiry } }, sealed)
      return Current.Token({ token: issued.success.access })
    })

  return {
    /** The person's token now: renewed first when it is about to expire. */
    current: (principal: Principal, loaded: LoadedConnection): Effect.Effect<Current> =>
      Effect.gen(function*() {
        if (loaded.row.sealed === null) return Current.None()
        if (!lapsed(loaded.config.userGrant.expiresAt, yield* Clock.currentTimeMillis, marginMs)) {
          return Current.Token({ token: (yield* openPair(deps.box, loaded.row.sealed)).access })
        }
        return yield* lockOf(loaded.row.id).withPermits(1)(renew(principal, loaded.row.id))
      })
  }
}

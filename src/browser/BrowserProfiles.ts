/**
 * Authenticated browser profiles (issue 30): Playwright's storage state kept
 * for one workspace of an organization (the scope of secrets: another
 * workspace's profile is not found), sealed with the master key (SealedState,
 * bound to its workspace and key) in `browser_profiles`. The API writes and
 * lists them, never reads the contents back; a run's browser loads one at
 * start and saves it back when it closes (`forRun`). Two runs on one profile:
 * the one that closes last wins.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schema } from "effect"
import {
  type BrowserProfile,
  BrowserProfileLimits,
  type BrowserProfilePut,
  StorageState
} from "../../domain/BrowserProfile.ts"
import { NotFound, PayloadTooLarge } from "../../domain/Errors.ts"
import type { Deleted, PageOf, PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { SealedState } from "../secrets/SealedState.ts"
import { SecretBox } from "../secrets/SecretBox.ts"
import { pageWindow, toPage } from "../store/Cursor.ts"
import { nowIso } from "../Time.ts"
import { BrowserError } from "./BrowserError.ts"
import type { SessionOptions } from "./BrowserSession.ts"

/** Whose a profile is: the sealed bytes are bound to it. */
export interface ProfileOwner {
  readonly organizationId: string
  readonly workspaceId: string
}

const ownerOf = (owner: ProfileOwner, key: string) => `${owner.organizationId}/${owner.workspaceId}/${key}`

const notFound = (key: string) =>
  new NotFound({ code: "browser_profile_not_found", message: `No browser profile '${key}' in this workspace.` })

/** What DELETE answers. */
export type DeletedProfile = ReturnType<typeof Deleted<"browser_profile">>

const Row = Schema.Struct({
  profile_key: Schema.String,
  id: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))
const decodeData = Schema.decodeUnknownEffect(
  Schema.Array(Schema.Struct({ key_id: Schema.String, data: Schema.Uint8Array }))
)
const decodeState = Schema.decodeUnknownEffect(Schema.fromJsonString(StorageState))
const encodeState = Schema.encodeEffect(Schema.fromJsonString(StorageState))

const view = (row: typeof Row.Type): BrowserProfile => ({
  profileKey: row.profile_key,
  object: "browser_profile",
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

export class BrowserProfiles extends Context.Service<BrowserProfiles, {
  /** Creates the profile or replaces its contents. */
  readonly put: (
    principal: Principal,
    key: string,
    body: BrowserProfilePut
  ) => Effect.Effect<BrowserProfile, PayloadTooLarge>
  readonly list: (principal: Principal, page: PageRequest) => Effect.Effect<PageOf<BrowserProfile>>
  readonly remove: (principal: Principal, key: string) => Effect.Effect<DeletedProfile["Type"], NotFound>
  /** The profile's contents, opened now; undefined when there is no such profile. */
  readonly read: (owner: ProfileOwner, key: string) => Effect.Effect<StorageState | undefined, BrowserError>
  /** What a run's browser loads at start and saves when it closes. */
  readonly forRun: (owner: ProfileOwner, key: string) => NonNullable<SessionOptions["profile"]>
}>()("svc/BrowserProfiles") {
  static readonly layer = Layer.effect(BrowserProfiles)(Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const ids = yield* IdGenerator
    const sealer = SealedState.make(yield* SecretBox)

    const seal = (owner: ProfileOwner, key: string, state: StorageState) =>
      Effect.gen(function*() {
        const json = yield* Effect.orDie(encodeState(state))
        const bytes = Buffer.byteLength(json, "utf8")
        if (bytes > BrowserProfileLimits.maxStateBytes) {
          return yield* new PayloadTooLarge({
            code: "payload_too_large",
            message: `storageState is ${bytes} bytes as JSON; at most ${BrowserProfileLimits.maxStateBytes} (1 MiB).`,
            details: { field: "storageState", maxBytes: BrowserProfileLimits.maxStateBytes }
          })
        }
        return yield* sealer.seal("browser_profile", ownerOf(owner, key), new TextEncoder().encode(json))
      })

    const read = Effect.fn("BrowserProfiles.read")(function*(owner: ProfileOwner, key: string) {
      const rows = yield* sql`SELECT key_id, data FROM browser_profiles
        WHERE organization_id = ${owner.organizationId} AND workspace_id = ${owner.workspaceId}
          AND profile_key = ${key}`.pipe(Effect.flatMap(decodeData), Effect.orDie)
      const row = rows[0]
      if (row === undefined) return undefined
      const plain = yield* sealer.open("browser_profile", ownerOf(owner, key), { keyId: row.key_id, data: row.data })
        .pipe(
          Effect.mapError(() =>
            new BrowserError({
              code: "browser_profile_unreadable",
              message: `The browser profile '${key}' cannot be opened with the configured master keys.`
            })
          )
        )
      return yield* Effect.orDie(decodeState(new TextDecoder().decode(plain)))
    })

    return BrowserProfiles.of({
      put: Effect.fn("BrowserProfiles.put")(function*(principal, key, body) {
        const sealed = yield* seal(principal, key, body.storageState)
        const id = yield* ids.make("browserProfile")
        const now = yield* nowIso
        const rows = yield* sql`INSERT INTO browser_profiles
          (organization_id, workspace_id, profile_key, id, key_id, data, created_at, updated_at)
          VALUES (${principal.organizationId}, ${principal.workspaceId}, ${key}, ${id}, ${sealed.keyId},
            ${sealed.data}, ${now}, ${now})
          ON CONFLICT (organization_id, workspace_id, profile_key) DO UPDATE SET key_id = excluded.key_id,
            data = excluded.data, updated_at = excluded.updated_at
          RETURNING profile_key, id, created_at, updated_at`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
        return view(rows[0])
      }),
      list: Effect.fn("BrowserProfiles.list")(function*(principal, page) {
        const { after, limit } = yield* Effect.orDie(pageWindow(page))
        const rows = yield* (after === undefined
          ? sql`SELECT profile_key, id, created_at, updated_at FROM browser_profiles
            WHERE organization_id = ${principal.organizationId} AND workspace_id = ${principal.workspaceId}
            ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
          : sql`SELECT profile_key, id, created_at, updated_at FROM browser_profiles
            WHERE organization_id = ${principal.organizationId} AND workspace_id = ${principal.workspaceId}
              AND (created_at, id) < (${after.createdAt}, ${after.id})
            ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`).pipe(Effect.flatMap(decodeRows), Effect.orDie)
        return toPage(rows.map((r) => ({ ...r, createdAt: r.created_at })), limit, view)
      }),
      remove: Effect.fn("BrowserProfiles.remove")(function*(principal, key) {
        const rows = yield* sql`DELETE FROM browser_profiles
          WHERE organization_id = ${principal.organizationId} AND workspace_id = ${principal.workspaceId}
            AND profile_key = ${key}
          RETURNING profile_key, id, created_at, updated_at`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
        if (rows.length === 0) return yield* notFound(key)
        return { id: key, object: "browser_profile", deleted: true }
      }),
      read,
      forRun: (owner, key) => ({
        load: Effect.flatMap(read(owner, key), (state) =>
          state === undefined
            ? Effect.fail(
              new BrowserError({
                code: "browser_profile_not_found",
                message:
                  `The agent's browser profile '${key}' (capabilities.browser.authenticated.profileKey) does not exist in this workspace: create it with PUT /v1/browser-profiles/${key}.`
              })
            )
            : Effect.succeed({
              cookies: state.cookies.map((cookie) => ({ ...cookie })),
              origins: state.origins.map((o) => ({
                origin: o.origin,
                localStorage: o.localStorage.map((item) => ({ ...item }))
              }))
            })),
        // The run that closes last wins; a profile deleted during the run stays deleted.
        save: (state) =>
          Effect.gen(function*() {
            const sealed = yield* seal(owner, key, state)
            const now = yield* nowIso
            yield* sql`UPDATE browser_profiles SET key_id = ${sealed.keyId}, data = ${sealed.data}, updated_at = ${now}
              WHERE organization_id = ${owner.organizationId} AND workspace_id = ${owner.workspaceId}
                AND profile_key = ${key}`
          }).pipe(
            Effect.catch((e) => Effect.logWarning(`browser profile '${key}' not saved: ${e.message}`)),
            Effect.catchDefect((e) => Effect.logWarning(`browser profile '${key}' not saved: ${String(e)}`))
          )
      })
    })
  }))
}

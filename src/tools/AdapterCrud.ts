/**
 * The CRUD core shared by secrets, secret contexts and the adapters:
 * ownership (403 across workspaces), names unique per organization
 * (409 name_conflict on create and rename), paging, configVersion on
 * structural change, and delete refused while something references the row
 * (409 resource_in_use).
 */
import { Effect, Schema } from "effect"
import { Conflict, InvalidRequest, type NotFound, type PermissionDenied } from "../../domain/Errors.ts"
import type { IdKind, IdOf } from "../../domain/Ids.ts"
import { applyMetadataPatch, type Metadata, type MetadataPatch } from "../../domain/Metadata.ts"
import type { PageOf, PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { canonicalJson } from "../CanonicalJson.ts"
import type { IdGenerator } from "../IdGenerator.ts"
import { requireOwned } from "../Ownership.ts"
import type { Sealed } from "../secrets/SecretBox.ts"
import { pageWindow, toPage } from "../store/Cursor.ts"
import type { AdapterTable, ListFilter, ResourceRow, ResourceStoreShape } from "../store/ResourceStore.ts"
import { nowIso } from "../Time.ts"

export interface Kind<Config, View, Resource extends string, K extends IdKind> {
  readonly table: AdapterTable
  readonly idKind: K
  /** The brand of the kind's ids: every stored row's id is decoded with it. */
  readonly id: Schema.Codec<IdOf<K>, string>
  /** `secret`, `tool_server`, ...: error codes are `<resource>_not_found`. */
  readonly resource: Resource
  readonly uniqueNames: boolean
  readonly config: Schema.Codec<Config, unknown>
  readonly view: (row: ResourceRow<IdOf<K>>, config: Config) => View
}

/** The fields every adapter resource shows, straight from its row. */
export const rowFields = <Id extends string>(row: ResourceRow<Id>) => ({
  id: row.id,
  name: row.name,
  metadata: row.metadata,
  configVersion: row.configVersion,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt
})

export interface Loaded<Config, Id extends string> {
  readonly row: ResourceRow<Id>
  readonly config: Config
}

export interface Draft<Config> {
  readonly name: string
  readonly config: Config
  readonly metadata: Metadata
  readonly sealed: Sealed | null
}

export type Owned<A> = Effect.Effect<A, NotFound | PermissionDenied>

export const makeCrud = <Config, View, const Resource extends string, K extends IdKind>(
  store: ResourceStoreShape,
  ids: IdGenerator["Service"],
  kind: Kind<Config, View, Resource, K>
) => {
  type Id = IdOf<K>
  const decode = Schema.decodeUnknownEffect(kind.config)
  const decodeId = Schema.decodeEffect(kind.id)
  const encode = Schema.encodeEffect(kind.config)
  const loaded = (row: ResourceRow) =>
    Effect.map(
      Effect.orDie(Effect.all({ id: decodeId(row.id), config: decode(row.config) })),
      ({ config, id }): Loaded<Config, Id> => ({ row: { ...row, id }, config })
    )
  const view = (l: Loaded<Config, Id>) => kind.view(l.row, l.config)

  const conflict = (name: string) =>
    new Conflict({
      code: "name_conflict",
      message: `A ${kind.resource.replaceAll("_", " ")} named '${name}' already exists in this organization.`,
      details: { field: "name" }
    })

  const checkName = (principal: Principal, name: string, selfId: string | undefined) =>
    kind.uniqueNames
      ? Effect.flatMap(store.findByName(kind.table, principal.organizationId, name), (found) =>
        found._tag === "Some" && found.value.id !== selfId ? Effect.fail(conflict(name)) : Effect.void)
      : Effect.void

  /** `id` is a plain string for references a client sent (`requireRef`), the kind's brand everywhere else. */
  const load = (principal: Principal, id: string): Owned<Loaded<Config, Id>> =>
    store.find(kind.table, id).pipe(
      Effect.flatMap(requireOwned<ResourceRow>(principal, kind.resource, id)),
      Effect.flatMap(loaded)
    )

  /** Saves a new state; configVersion increments when `structural`. */
  const save = Effect.fn(`${kind.resource}.save`)(function*(
    principal: Principal,
    current: Loaded<Config, Id>,
    next: Draft<Config>,
    structural: boolean
  ) {
    if (next.name !== current.row.name) yield* checkName(principal, next.name, current.row.id)
    const row: ResourceRow<Id> = {
      ...current.row,
      name: next.name,
      config: yield* Effect.orDie(encode(next.config)),
      metadata: next.metadata,
      sealed: next.sealed,
      configVersion: structural ? current.row.configVersion + 1 : current.row.configVersion,
      updatedAt: yield* nowIso
    }
    yield* store.update(kind.table, row).pipe(Effect.catchTag("NameTaken", () => Effect.fail(conflict(next.name))))
    return kind.view(row, next.config)
  })

  return {
    view,
    load: (principal: Principal, id: Id) => load(principal, id),
    /** For references from other resources: fails naming `field` unless the row exists in the caller's workspace. */
    requireRef: (principal: Principal, id: string, field: string): Effect.Effect<Loaded<Config, Id>, InvalidRequest> =>
      load(principal, id).pipe(
        Effect.mapError(() =>
          InvalidRequest.forField(
            field,
            `${field}: no ${kind.resource.replaceAll("_", " ")} '${id}' in this workspace.`
          )
        )
      ),
    get: (principal: Principal, id: Id): Owned<View> => Effect.map(load(principal, id), view),
    list: Effect.fn(`${kind.resource}.list`)(function*(principal: Principal, page: PageRequest, filter?: ListFilter) {
      const { limit, after } = yield* pageWindow(page)
      const rows = yield* store.list(kind.table, principal, limit, after, filter)
      const items = yield* Effect.forEach(rows, loaded)
      return toPage(items.map((l) => ({ ...l, id: l.row.id, createdAt: l.row.createdAt })), limit, view) as PageOf<View>
    }),
    create: Effect.fn(`${kind.resource}.create`)(function*(principal: Principal, draft: Draft<Config>) {
      yield* checkName(principal, draft.name, undefined)
      const now = yield* nowIso
      const row: ResourceRow<Id> = {
        id: yield* ids.make(kind.idKind),
        organizationId: principal.organizationId,
        workspaceId: principal.workspaceId,
        name: draft.name,
        config: yield* Effect.orDie(encode(draft.config)),
        metadata: draft.metadata,
        configVersion: 1,
        sealed: draft.sealed,
        createdAt: now,
        updatedAt: now
      }
      // The unique index decides races the check above cannot see.
      yield* store.insert(kind.table, row).pipe(Effect.catchTag("NameTaken", () => Effect.fail(conflict(draft.name))))
      return kind.view(row, draft.config)
    }),
    save,
    /**
     * Saves a PATCH: its name and metadata over the current ones, `config` in place of the
     * current one, the sealed value kept; structural when the name or the config changed.
     */
    saveEdit: Effect.fn(`${kind.resource}.saveEdit`)(function*(
      principal: Principal,
      current: Loaded<Config, Id>,
      patch: { readonly name?: string | undefined; readonly metadata?: MetadataPatch | undefined },
      config: Config
    ) {
      const name = patch.name ?? current.row.name
      const metadata = yield* mergeMetadata(current.row.metadata, patch.metadata)
      const structural = name !== current.row.name || canonicalJson(config) !== canonicalJson(current.config)
      return yield* save(principal, current, { name, config, metadata, sealed: current.row.sealed }, structural)
    }),
    remove: Effect.fn(`${kind.resource}.remove`)(function*(
      principal: Principal,
      id: Id,
      inUse: (l: Loaded<Config, Id>) => Effect.Effect<Record<string, unknown> | undefined>
    ) {
      const current = yield* load(principal, id)
      const details = yield* inUse(current)
      if (details !== undefined) {
        return yield* new Conflict({
          code: "resource_in_use",
          message: `The ${
            kind.resource.replaceAll("_", " ")
          } '${id}' is still referenced; remove the references first.`,
          details
        })
      }
      yield* store.remove(kind.table, id)
      return { id, object: kind.resource, deleted: true as const }
    })
  }
}

/** Merges a metadata patch, or fails naming the field. */
export const mergeMetadata = (current: Metadata, patch: MetadataPatch | undefined) => {
  const merged = applyMetadataPatch(current, patch)
  return typeof merged === "string" ? Effect.fail(InvalidRequest.forField("metadata", merged)) : Effect.succeed(merged)
}

/** Agents whose config contains `probe`, as `details.inUseByAgentIds`. */
export const agentsReferencing = (
  store: ResourceStoreShape,
  principal: Principal,
  probes: ReadonlyArray<unknown>
): Effect.Effect<Record<string, unknown> | undefined> =>
  Effect.map(Effect.forEach(probes, (probe) => store.referrers("agents", "config", probe, principal)), (lists) => {
    const ids = [...new Set(lists.flat())].sort()
    return ids.length === 0 ? undefined : { inUseByAgentIds: ids }
  })

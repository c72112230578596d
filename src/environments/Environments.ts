/**
 * Environments (issue 31): the CRUD of `/v1/environments` on the adapters'
 * core (AdapterCrud: ownership, paging, metadata patches, delete refused while
 * an agent's `workspace.environmentId` names it), the connection token (minted
 * like API keys, kept as its SHA-256 only, answered once by create and
 * rotate-token), the status a user reads (the runners connected now), and the
 * runners' authentication by token.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import {
  type Environment,
  EnvironmentConfig,
  type EnvironmentCreate,
  type EnvironmentPatch,
  type EnvironmentWithToken
} from "../../domain/Environment.ts"
import { type Conflict, InvalidRequest, type NotFound, type PermissionDenied } from "../../domain/Errors.ts"
import { EnvironmentId, type EnvironmentId as EnvId } from "../../domain/Ids.ts"
import type { PageOf, PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { sha256Hex } from "../CanonicalJson.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { requireOwned } from "../Ownership.ts"
import { ResourceStore } from "../store/ResourceStore.ts"
import { agentsReferencing, makeCrud, rowFields } from "../tools/AdapterCrud.ts"
import { EnvironmentRepo } from "./EnvironmentRepo.ts"

/** Connection tokens start with this, so a leaked one is recognisable (secret scanners). */
export const tokenPrefix = "envtok_"

type Base = Omit<Environment, "status" | "runners">

/** The environment a runner's token opens. */
export interface RunnerGrant {
  readonly environmentId: string
  readonly tokenHash: string
}

export class Environments extends Context.Service<Environments, {
  readonly create: (principal: Principal, input: EnvironmentCreate) => Effect.Effect<EnvironmentWithToken>
  readonly list: (principal: Principal, page: PageRequest) => Effect.Effect<PageOf<Environment>, InvalidRequest>
  readonly get: (principal: Principal, id: EnvId) => Effect.Effect<Environment, NotFound | PermissionDenied>
  readonly update: (
    principal: Principal,
    id: EnvId,
    patch: EnvironmentPatch
  ) => Effect.Effect<Environment, NotFound | PermissionDenied | InvalidRequest | Conflict>
  readonly remove: (
    principal: Principal,
    id: EnvId
  ) => Effect.Effect<
    { readonly id: EnvId; readonly object: "environment"; readonly deleted: true },
    NotFound | PermissionDenied | Conflict
  >
  /** A new token; the old one stops working at once, and the runners connected with it are dropped. */
  readonly rotateToken: (
    principal: Principal,
    id: EnvId
  ) => Effect.Effect<EnvironmentWithToken, NotFound | PermissionDenied | Conflict>
  /** For `workspace.environmentId`: 400 naming `field` unless it exists, 403 in another workspace. */
  readonly requireRef: (
    principal: Principal,
    id: string,
    field: string
  ) => Effect.Effect<void, InvalidRequest | PermissionDenied>
  /** The environment a runner's token opens, if any. */
  readonly authenticate: (token: Redacted.Redacted) => Effect.Effect<Option.Option<RunnerGrant>>
}>()("svc/Environments") {
  static readonly layer = Layer.effect(Environments)(
    Effect.gen(function*() {
      const store = yield* ResourceStore
      const ids = yield* IdGenerator
      const repo = yield* EnvironmentRepo
      const crud = makeCrud(store, ids, {
        table: "environments",
        idKind: "environment",
        id: EnvironmentId,
        resource: "environment",
        uniqueNames: false,
        config: EnvironmentConfig,
        view: (row): Base => ({ ...rowFields(row), object: "environment" })
      })
      const withStatus = (base: Base): Effect.Effect<Environment> =>
        Effect.map(repo.runners(base.id), (runners) => ({
          ...base,
          status: runners.length > 0 ? "connected" : "disconnected",
          runners
        }))
      const newToken = Effect.map(ids.secretToken(tokenPrefix), (token) => {
        const value = Redacted.value(token)
        return { value, config: { tokenHash: sha256Hex(value) } }
      })
      return {
        create: Effect.fn("Environments.create")(function*(principal, input) {
          const token = yield* newToken
          const base = yield* crud.create(principal, {
            name: input.name,
            config: token.config,
            metadata: input.metadata ?? {},
            sealed: null
          }).pipe(Effect.catchTag("Conflict", Effect.die))
          return { ...(yield* withStatus(base)), token: token.value }
        }),
        list: Effect.fn("Environments.list")(function*(principal, page) {
          const listed = yield* crud.list(principal, page)
          return { ...listed, data: yield* Effect.forEach(listed.data, withStatus) }
        }),
        get: (principal, id) => Effect.flatMap(crud.get(principal, id), withStatus),
        update: Effect.fn("Environments.update")(function*(principal, id, patch) {
          const current = yield* crud.load(principal, id)
          return yield* withStatus(yield* crud.saveEdit(principal, current, patch, current.config))
        }),
        remove: (principal, id) =>
          crud.remove(principal, id, () => agentsReferencing(store, principal, [{ workspace: { environmentId: id } }]))
            // Its runners' rows went with it; their polls still waiting end now (no token matches "").
            .pipe(Effect.tap(() => repo.dropStale(id, ""))),
        rotateToken: Effect.fn("Environments.rotateToken")(function*(principal, id) {
          const current = yield* crud.load(principal, id)
          const token = yield* newToken
          const base = yield* crud.save(principal, current, {
            name: current.row.name,
            config: token.config,
            metadata: current.row.metadata,
            sealed: null
          }, true)
          yield* repo.dropStale(id, token.config.tokenHash)
          return { ...(yield* withStatus(base)), token: token.value }
        }),
        requireRef: (principal, id, field) =>
          Effect.flatMap(store.find("environments", id), (found) =>
            Option.isNone(found)
              ? Effect.fail(InvalidRequest.forField(field, `${field}: no environment '${id}' in this workspace.`))
              : Effect.asVoid(requireOwned(principal, "environment", id)(found))
                .pipe(Effect.catchTag("NotFound", Effect.die))),
        authenticate: (token) => {
          const tokenHash = sha256Hex(Redacted.value(token))
          return Effect.map(
            repo.environmentOfToken(tokenHash),
            Option.map((environmentId) => ({ environmentId, tokenHash }))
          )
        }
      }
    })
  ).pipe(Layer.provide(ResourceStore.layer))
}

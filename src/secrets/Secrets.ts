/**
 * Secrets (spec 4.9). Values are sealed with SecretBox before they are
 * stored, never returned, never logged; they are opened only at the moment
 * of use (`reveal`) by the adapter that binds them.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import { InvalidRequest } from "../../domain/Errors.ts"
import { SecretId } from "../../domain/Ids.ts"
import type { PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import { type Secret, SecretConfig, type SecretCreate, SecretLimits, type SecretPatch } from "../../domain/Secret.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { type ListFilter, ResourceStore } from "../store/ResourceStore.ts"
import { makeCrud, mergeMetadata, rowFields } from "../tools/AdapterCrud.ts"
import { SecretBox } from "./SecretBox.ts"

const checkValue = (value: string, field = "value") => {
  if (value.length === 0) return Effect.fail(InvalidRequest.forField(field, "value must not be empty."))
  const bytes = Buffer.byteLength(value, "utf8")
  if (bytes > SecretLimits.maxValueBytes) {
    return Effect.fail(
      InvalidRequest.forField(
        field,
        `value is ${bytes} bytes; at most ${SecretLimits.maxValueBytes} (64 KiB) are allowed.`
      )
    )
  }
  return Effect.succeed(Redacted.make(value))
}

const make = Effect.gen(function*() {
  const store = yield* ResourceStore
  const ids = yield* IdGenerator
  const box = yield* SecretBox
  const crud = makeCrud(store, ids, {
    table: "secrets",
    idKind: "secret",
    id: SecretId,
    resource: "secret",
    uniqueNames: true,
    config: SecretConfig,
    view: (row, config): Secret => ({
      ...rowFields(row),
      object: "secret",
      source: config.source,
      contentType: config.contentType
    })
  })

  /** Tool servers, HTTP connections and secret contexts that bind the secret. */
  const referrers = (principal: Principal, id: SecretId) =>
    Effect.gen(function*() {
      const servers = yield* store.referrers("tool_servers", "config", { auth: { secretId: id } }, principal)
      const connections = yield* store.referrers("http_connections", "config", { auth: { secretId: id } }, principal)
      const contexts = yield* store.referrers(
        "secret_contexts",
        "config",
        { projections: [{ secretId: id }] },
        principal
      )
      const inUseBy = [
        ...servers.map((rid) => ({ object: "tool_server", id: rid })),
        ...connections.map((rid) => ({ object: "http_connection", id: rid })),
        ...contexts.map((rid) => ({ object: "secret_context", id: rid }))
      ]
      return inUseBy.length === 0 ? undefined : { inUseBy }
    })

  return {
    create: Effect.fn("Secrets.create")(function*(principal: Principal, input: SecretCreate) {
      if (input.source !== undefined && input.source !== "svc") {
        return yield* InvalidRequest.forField(
          "source",
          `Unsupported source '${input.source}': only 'svc' is accepted on create.`
        )
      }
      const value = yield* checkValue(input.value)
      return yield* crud.create(principal, {
        name: input.name,
        config: { source: "svc", contentType: input.contentType ?? null },
        metadata: input.metadata ?? {},
        sealed: yield* box.seal(value)
      })
    }),
    get: (principal: Principal, id: SecretId) => crud.get(principal, id),
    list: (principal: Principal, page: PageRequest, filter: ListFilter) => crud.list(principal, page, filter),
    update: Effect.fn("Secrets.update")(function*(principal: Principal, id: SecretId, patch: SecretPatch) {
      const current = yield* crud.load(principal, id)
      const name = patch.name ?? current.row.name
      const contentType = patch.contentType === undefined ? current.config.contentType : patch.contentType
      const metadata = yield* mergeMetadata(current.row.metadata, patch.metadata)
      const structural = name !== current.row.name || contentType !== current.config.contentType
      return yield* crud.save(
        principal,
        current,
        { name, config: { ...current.config, contentType }, metadata, sealed: current.row.sealed },
        structural
      )
    }),
    rotate: Effect.fn("Secrets.rotate")(function*(principal: Principal, id: SecretId, value: string) {
      const current = yield* crud.load(principal, id)
      const sealed = yield* box.seal(yield* checkValue(value))
      return yield* crud.save(principal, current, { ...current.row, config: current.config, sealed }, true)
    }),
    remove: (principal: Principal, id: SecretId) => crud.remove(principal, id, () => referrers(principal, id)),
    /**
     * The secret's value for a binding of the same workspace, opened now.
     * A missing or foreign secret fails naming `field`.
     */
    reveal: Effect.fn("Secrets.reveal")(function*(principal: Principal, id: SecretId, field: string) {
      const current = yield* crud.requireRef(principal, id, field)
      if (current.row.sealed === null) return yield* Effect.die(new Error(`secret ${id} has no sealed value`))
      return yield* box.open(current.row.sealed)
    }),
    /** Checks a reference a client sent (a plain string until then) against the caller's workspace. */
    requireRef: crud.requireRef
  }
})

export class Secrets extends Context.Service<Secrets, Effect.Success<typeof make>>()("svc/Secrets") {
  static readonly layer = Layer.effect(Secrets)(make).pipe(Layer.provide(ResourceStore.layer))
}

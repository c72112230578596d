/** Secret contexts: CRUD, with every projected secret checked in the caller's workspace. */
import { Context, Effect, Layer } from "effect"
import { InvalidRequest } from "../../domain/Errors.ts"
import { SecretContextId } from "../../domain/Ids.ts"
import type { PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import {
  type SecretContext,
  SecretContextConfig,
  type SecretContextCreate,
  type SecretContextPatch
} from "../../domain/SecretContext.ts"
import { canonicalJson } from "../CanonicalJson.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { ResourceStore } from "../store/ResourceStore.ts"
import { agentsReferencing, makeCrud, mergeMetadata, rowFields } from "../tools/AdapterCrud.ts"
import { Secrets } from "./Secrets.ts"

const make = Effect.gen(function*() {
  const store = yield* ResourceStore
  const ids = yield* IdGenerator
  const secrets = yield* Secrets
  const crud = makeCrud(store, ids, {
    table: "secret_contexts",
    idKind: "secretContext",
    id: SecretContextId,
    resource: "secret_context",
    uniqueNames: true,
    config: SecretContextConfig,
    view: (row, config): SecretContext => ({
      ...rowFields(row),
      object: "secret_context",
      projections: config.projections
    })
  })

  const checkProjections = Effect.fn("SecretContexts.checkProjections")(
    function*(principal: Principal, projections: SecretContextConfig["projections"]) {
      const seen = new Set<string>()
      for (let i = 0; i < projections.length; i++) {
        const p = projections[i]
        if (seen.has(p.env)) {
          return yield* InvalidRequest.forField(
            `projections[${i}].env`,
            `Environment variable '${p.env}' is projected twice.`
          )
        }
        seen.add(p.env)
        yield* secrets.requireRef(principal, p.secretId, `projections[${i}].secretId`)
      }
    }
  )

  return {
    create: Effect.fn("SecretContexts.create")(function*(principal: Principal, input: SecretContextCreate) {
      yield* checkProjections(principal, input.projections)
      return yield* crud.create(principal, {
        name: input.name,
        config: { projections: input.projections },
        metadata: input.metadata ?? {},
        sealed: null
      })
    }),
    get: (principal: Principal, id: SecretContextId) => crud.get(principal, id),
    list: (principal: Principal, page: PageRequest) => crud.list(principal, page),
    update: Effect.fn("SecretContexts.update")(
      function*(principal: Principal, id: SecretContextId, patch: SecretContextPatch) {
        const current = yield* crud.load(principal, id)
        const projections = patch.projections ?? current.config.projections
        if (patch.projections !== undefined) yield* checkProjections(principal, projections)
        const metadata = yield* mergeMetadata(current.row.metadata, patch.metadata)
        const name = patch.name ?? current.row.name
        const structural = name !== current.row.name ||
          canonicalJson(projections) !== canonicalJson(current.config.projections)
        return yield* crud.save(
          principal,
          current,
          { name, config: { projections }, metadata, sealed: null },
          structural
        )
      }
    ),
    remove: (principal: Principal, id: SecretContextId) =>
      crud.remove(principal, id, () => agentsReferencing(store, principal, [{ workspace: { secretContexts: [id] } }])),
    requireRef: crud.requireRef
  }
})

export class SecretContexts
  extends Context.Service<SecretContexts, Effect.Success<typeof make>>()("svc/SecretContexts")
{
  static readonly layer = Layer.effect(SecretContexts)(make).pipe(Layer.provide([ResourceStore.layer, Secrets.layer]))
}

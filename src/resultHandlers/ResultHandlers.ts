/** Result handlers (spec 4.5): registration and secret rotation. Dispatch is ResultDispatch.ts. */
import { Context, Effect, Layer, Redacted } from "effect"
import { InvalidRequest } from "../../domain/Errors.ts"
import { ResultHandlerId } from "../../domain/Ids.ts"
import type { PageRequest } from "../../domain/Page.ts"
import type { Principal } from "../../domain/Principal.ts"
import {
  type ResultHandler,
  ResultHandlerConfig,
  type ResultHandlerCreate,
  type ResultHandlerPatch,
  ResultHandlerTimeout
} from "../../domain/ResultHandler.ts"
import { SigningSecretMinBytes, signingSecretRefusal } from "../../domain/ToolApprovalHook.ts"
import { IdGenerator } from "../IdGenerator.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { SecretBox } from "../secrets/SecretBox.ts"
import { ResourceStore } from "../store/ResourceStore.ts"
import { agentsReferencing, makeCrud, rowFields } from "../tools/AdapterCrud.ts"

/** The workspace a dispatch is made for. */
export type Owner = Pick<Principal, "organizationId" | "workspaceId">

const make = Effect.gen(function*() {
  const store = yield* ResourceStore
  const ids = yield* IdGenerator
  const box = yield* SecretBox
  const outbound = yield* Outbound
  const crud = makeCrud(store, ids, {
    table: "result_handlers",
    idKind: "resultHandler",
    id: ResultHandlerId,
    resource: "result_handler",
    uniqueNames: false,
    config: ResultHandlerConfig,
    view: (row, c): ResultHandler => ({
      ...rowFields(row),
      object: "result_handler",
      kind: c.kind,
      url: c.url,
      requestTimeoutMs: c.requestTimeoutMs
    })
  })

  /** No secret (absent, empty, not a string) is the spec's result_handler_secret_missing; a weak or oversized one is invalid. */
  const secretOf = (secret: unknown) => {
    if (typeof secret !== "string" || secret.length === 0) {
      return Effect.fail(
        InvalidRequest.forField(
          "secret",
          `A result handler needs a signing secret: a string of at least ${SigningSecretMinBytes} bytes (UTF-8).`,
          "result_handler_secret_missing"
        )
      )
    }
    const refused = signingSecretRefusal(secret)
    return refused === undefined
      ? Effect.succeed(Redacted.make(secret))
      : Effect.fail(InvalidRequest.forField("secret", `${refused}.`))
  }

  return {
    create: Effect.fn("ResultHandlers.create")(function*(principal: Principal, input: ResultHandlerCreate) {
      if (input.kind !== "artifact") {
        return yield* InvalidRequest.forField(
          "kind",
          `Unsupported result handler kind ${JSON.stringify(input.kind) ?? "(missing)"}: only 'artifact' is supported.`,
          "result_handler_invalid_kind"
        )
      }
      const secret = yield* secretOf(input.secret)
      const url = yield* outbound.checkUrl(input.url, "url")
      return yield* crud.create(principal, {
        name: input.name,
        config: {
          kind: "artifact",
          url: url.toString(),
          requestTimeoutMs: input.requestTimeoutMs ?? ResultHandlerTimeout.defaultMs
        },
        metadata: input.metadata ?? {},
        sealed: yield* box.seal(secret)
      })
    }),
    get: (principal: Principal, id: ResultHandlerId) => crud.get(principal, id),
    list: (principal: Principal, page: PageRequest) => crud.list(principal, page),
    update: Effect.fn("ResultHandlers.update")(
      function*(principal: Principal, id: ResultHandlerId, patch: ResultHandlerPatch) {
        const current = yield* crud.load(principal, id)
        const next: ResultHandlerConfig = {
          kind: "artifact",
          url: patch.url === undefined ? current.config.url : (yield* outbound.checkUrl(patch.url, "url")).toString(),
          requestTimeoutMs: patch.requestTimeoutMs === undefined
            ? current.config.requestTimeoutMs
            : patch.requestTimeoutMs ?? ResultHandlerTimeout.defaultMs
        }
        return yield* crud.saveEdit(principal, current, patch, next)
      }
    ),
    rotateSecret: Effect.fn("ResultHandlers.rotateSecret")(
      function*(principal: Principal, id: ResultHandlerId, secret: unknown) {
        const current = yield* crud.load(principal, id)
        const sealed = yield* box.seal(yield* secretOf(secret))
        return yield* crud.save(principal, current, { ...current.row, config: current.config, sealed }, true)
      }
    ),
    remove: (principal: Principal, id: ResultHandlerId) =>
      crud.remove(principal, id, () =>
        agentsReferencing(store, principal, [
          { artifacts: { exports: { resultHandlerId: id } } },
          { artifacts: { oversizedToolResults: { resultHandlerId: id } } }
        ])),
    requireRef: crud.requireRef,
    /** The handler as a dispatch needs it (config and opened secret); undefined when it is gone or of another workspace. */
    forDispatch: Effect.fn("ResultHandlers.forDispatch")(function*(owner: Owner, id: ResultHandlerId) {
      const loaded = yield* crud.load({ keyId: "", ...owner }, id).pipe(Effect.option)
      if (loaded._tag === "None" || loaded.value.row.sealed === null) return undefined
      return { id, config: loaded.value.config, secret: yield* box.open(loaded.value.row.sealed) }
    })
  }
})

export class ResultHandlers
  extends Context.Service<ResultHandlers, Effect.Success<typeof make>>()("svc/ResultHandlers")
{
  static readonly layer = Layer.effect(ResultHandlers)(make).pipe(Layer.provide(ResourceStore.layer))
}
